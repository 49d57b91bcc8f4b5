#!/usr/bin/env node
// A small OpenAI-compatible chat-completions server over node-llama-cpp (prebuilt llama.cpp, CPU
// only), for polars-rag's LLM-as-judge tests. It serves one GGUF model on 127.0.0.1:
//
//   POST /v1/chat/completions   model, messages (system/developer/user/assistant), temperature
//                               (0 = greedy), top_p, seed, max_tokens / max_completion_tokens,
//                               stop, frequency_penalty / presence_penalty, and response_format
//                               {"type":"text"|"json_object"|"json_schema", ...}
//   GET  /v1/models             the one model
//   GET  /health                {"status":"ok"}
// (the same paths without the /v1 prefix work too).
//
// Usage:
//   node server.mjs --model FILE.gguf [--port N] [--host 127.0.0.1] [--context-size N]
//                   [--threads N] [--model-name NAME] [--repeat-penalty P] [--repeat-last-n N]
//                   [--reuse-prefix]
// Environment (used when the option is absent): LLM_SERVER_MODEL, LLM_SERVER_PORT (or PORT),
// LLM_SERVER_CONTEXT_SIZE, LLM_SERVER_THREADS, LLM_SERVER_MODEL_NAME.
// Port 0 (the default) picks a free port. Once the model is loaded, the first line on stdout is
//   listening on http://127.0.0.1:PORT/v1
// and nothing else is ever written to stdout (logs go to stderr), so a harness can read it.
//
// Behaviour worth knowing:
// - Output at temperature 0 is reproducible for the same model file, thread count (default 2,
//   --threads) and context size (default 8192, --context-size), on the same kind of CPU (llama.cpp
//   picks a SIMD variant per CPU): change any of these and greedy replies may change.
// - Requests are served one at a time, in arrival order, on one context sequence whose history
//   is cleared before each request: nothing leaks between requests, and a request's reply does
//   not depend on what ran before or beside it (batching several sequences together changes the
//   floating-point sums, so greedy output could differ). Same request at temperature 0 → same
//   reply. With --reuse-prefix the history is not cleared: the tokens a request shares with the
//   previous one are kept and only the rest is evaluated, as llama.cpp's own server does by
//   default. Much faster for clients whose prompts share long instructions and examples, but a
//   reply may then differ in the last digits of the sums from the reply on a cleared context, so
//   the tests leave it off.
// - Any `model` string is accepted (the reply names the served model), as llama.cpp's server does.
// - No repeat penalty unless frequency_penalty / presence_penalty are given (OpenAI's defaults),
//   or the server is started with --repeat-penalty P (> 1 discourages repeating any of the last
//   --repeat-last-n tokens, default 64, as llama.cpp's own server does; Ollama's default is 1.1).
//   A tiny model decoded greedily tends to repeat array items until max_tokens; the penalty makes
//   ending the array likelier. It applies to every request alike, whatever the client.
// - temperature defaults to 1 as in OpenAI's API; with temperature > 0 and no seed, the seed is
//   random.
// - A prompt that does not fit the context is a 400 (code context_length_exceeded); max_tokens is
//   clamped to the room left in the context, so the context never shifts.
// - Errors are JSON: {"error": {"message", "type", "param", "code"}}; 400 for bad requests. A
//   response_format the grammar cannot express is a 400 whose message names `response_format` and
//   the keyword, so a client can fall back to json_object.
// - SIGTERM / SIGINT: stop accepting, abort the running generation, free the model, exit 0.

import http from "node:http";
import path from "node:path";
import { getLlama, LlamaChat } from "node-llama-cpp";

// ---------------------------------------------------------------------------------------------
// Options

function parseArgs(argv) {
    const out = {};
    for (let i = 0; i < argv.length; i++) {
        const arg = argv[i];
        const m = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
        if (!m) fail(`unexpected argument ${JSON.stringify(arg)}`);
        const [, name, inline] = m;
        if (name === "help") {
            process.stderr.write("usage: node server.mjs --model FILE.gguf [--port N] [--host H] " +
                "[--context-size N] [--threads N] [--model-name NAME] [--repeat-penalty P] " +
                "[--repeat-last-n N] [--reuse-prefix]\n");
            process.exit(0);
        }
        if (name === "reuse-prefix") { // a flag: takes no value
            out[name] = inline ?? "1";
            continue;
        }
        const value = inline ?? argv[++i];
        if (value === undefined) fail(`--${name} needs a value`);
        out[name] = value;
    }
    return out;
}

function fail(message) {
    process.stderr.write(`llm-server: ${message}\n`);
    process.exit(2);
}

function intOption(value, name, min) {
    if (value === undefined || value === "") return undefined;
    const n = Number(value);
    if (!Number.isInteger(n) || n < min) fail(`${name} must be an integer >= ${min}, got ${value}`);
    return n;
}

function numberOption(value, name, min) {
    if (value === undefined || value === "") return undefined;
    const n = Number(value);
    if (!Number.isFinite(n) || n < min) fail(`${name} must be a number >= ${min}, got ${value}`);
    return n;
}

const args = parseArgs(process.argv.slice(2));
const env = process.env;
const modelPath = args.model ?? env.LLM_SERVER_MODEL;
if (!modelPath) fail("no model: pass --model FILE.gguf or set LLM_SERVER_MODEL");
const host = args.host ?? env.LLM_SERVER_HOST ?? "127.0.0.1";
const port = intOption(args.port ?? env.LLM_SERVER_PORT ?? env.PORT ?? "0", "port", 0);
const wantedContext = intOption(args["context-size"] ?? env.LLM_SERVER_CONTEXT_SIZE, "context size", 256);
const wantedThreads = intOption(args.threads ?? env.LLM_SERVER_THREADS, "threads", 1);
const repeatPenalty = numberOption(args["repeat-penalty"] ?? env.LLM_SERVER_REPEAT_PENALTY, "repeat penalty", 1);
const repeatLastN = intOption(args["repeat-last-n"] ?? env.LLM_SERVER_REPEAT_LAST_N, "repeat last n", 1) ?? 64;
const reusePrefix = (args["reuse-prefix"] ?? env.LLM_SERVER_REUSE_PREFIX ?? "0") !== "0";
const modelName = args["model-name"] ?? env.LLM_SERVER_MODEL_NAME
    ?? path.basename(modelPath).replace(/\.gguf$/i, "");
for (const name of Object.keys(args)) {
    if (!["model", "host", "port", "context-size", "threads", "model-name", "repeat-penalty", "repeat-last-n", "reuse-prefix"].includes(name))
        fail(`unknown option --${name}`);
}

const log = (message) => process.stderr.write(`llm-server: ${message}\n`);

// ---------------------------------------------------------------------------------------------
// Model

const loadStart = performance.now();
const llama = await getLlama({
    gpu: false,
    build: "never", // only the prebuilt binaries of @node-llama-cpp/linux-x64: never download
    logLevel: "warn",
    logger: (level, message) => process.stderr.write(`llama [${level}] ${message.trimEnd()}\n`),
});
const model = await llama.loadModel({ modelPath, gpuLayers: 0 });
const contextSize = Math.min(wantedContext ?? 8192, model.trainContextSize ?? 8192);
// A fixed default thread count, not the machine's core count: llama.cpp splits its sums by
// thread, so greedy output can differ between thread counts (measured: 1 vs 2 threads gave
// different replies to the same request).
const threads = wantedThreads ?? 2;
const context = await model.createContext({ contextSize, sequences: 1, threads });
const sequence = context.getSequence();
const created = Math.floor(Date.now() / 1000);
log(`loaded ${modelPath} in ${((performance.now() - loadStart) / 1000).toFixed(2)} s ` +
    `(context ${context.contextSize} tokens, ${threads} threads)`);

// ---------------------------------------------------------------------------------------------
// Errors

class HttpError extends Error {
    constructor(status, message, { param = null, code = null, type = "invalid_request_error" } = {}) {
        super(message);
        this.status = status;
        this.param = param;
        this.code = code;
        this.type = type;
    }
}
const bad = (message, param = null, code = null) => new HttpError(400, message, { param, code });

// ---------------------------------------------------------------------------------------------
// JSON schema → node-llama-cpp grammar schema
//
// node-llama-cpp 3.22's createGrammarForJsonSchema understands: type (a name, or a list of
// string/number/integer/boolean/null), properties, additionalProperties (bool or schema),
// minProperties/maxProperties, items, prefixItems, minItems/maxItems, minLength/maxLength,
// format (date-time/time/date only), enum (of strings, numbers, booleans, null — so integer
// enums such as `{"type": "integer", "enum": [0, 1]}` work), const, oneOf, $ref to #/$defs/...,
// description. What it does with the rest, and what is done about it here:
// - `required` is ignored: every declared property is always emitted, in declaration order.
//   That output still satisfies the schema, so nothing to do.
// - `anyOf` is ignored (the node would become `null`!): translated to `oneOf`.
// - `allOf` with one member: merged into the node; with several: 400 (not expressible).
// - `type` as a list (e.g. ["object", "null"]): object/array members would be dropped and the
//   members' own keywords ignored, so it becomes a oneOf of one node per type.
// - `nullable: true` (OpenAPI): becomes a oneOf with {"type": "null"}.
// - `$ref` to "#/definitions/X": rewritten to "#/$defs/X" (with `definitions` → `$defs`); any
//   other $ref: 400.
// - A node without type/enum/const/oneOf/$ref (e.g. `{}` or `true`: any value) would become
//   `null`: it becomes any JSON value.
// - An object without `properties` and without `additionalProperties` would allow only `{}`:
//   it gets `additionalProperties: true` (JSON Schema's default).
// - `items` as a list (draft-4 tuples): becomes `prefixItems` (with `additionalItems` as items).
// - integer `minimum`/`maximum` (and the exclusive forms) bounding at most 256 values: becomes
//   an `enum` of those integers. Other numeric bounds, `multipleOf`, `pattern`, `uniqueItems`,
//   a `format` other than date-time/time/date, and annotations (title, $schema, $id, default,
//   examples, ...) are stripped: the output is still valid JSON of the right shape, and the
//   client validates the reply anyway.
// - Keywords whose meaning cannot be kept by stripping (not, if/then/else, patternProperties,
//   dependentRequired, dependentSchemas, propertyNames, unevaluatedProperties, contains, ...)
//   are a 400 naming `response_format` and the keyword.

const UNSUPPORTED = ["not", "if", "then", "else", "patternProperties", "dependentRequired",
    "dependentSchemas", "dependencies", "propertyNames", "unevaluatedProperties",
    "unevaluatedItems", "contains", "minContains", "maxContains", "$dynamicRef", "$recursiveRef"];
const SCALAR_TYPES = ["string", "number", "integer", "boolean", "null"];
const ALL_TYPES = [...SCALAR_TYPES, "object", "array"];
const FORMATS = ["date-time", "time", "date"];
const ANY_VALUE = Object.freeze({
    oneOf: [
        { type: ["string", "number", "boolean", "null"] },
        { type: "array" },
        { type: "object", additionalProperties: true },
    ],
});

function schemaError(where, message) {
    return bad(`response_format.json_schema: ${message} at ${where}; ` +
        "the server's grammar cannot express it (use response_format json_object)",
    "response_format", "unsupported_json_schema");
}

function isObject(value) {
    return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** A copy of `schema` that node-llama-cpp's grammar generator handles as JSON Schema means it. */
function toGrammarSchema(root) {
    if (!isObject(root)) throw schemaError("$", "the schema is not an object");
    const defs = { ...(root.definitions ?? {}), ...(root.$defs ?? {}) };
    const out = convert(root, "$");
    if (Object.keys(defs).length > 0) {
        const converted = {};
        for (const [name, def] of Object.entries(defs)) converted[name] = convert(def, `$.$defs.${name}`);
        if ("$ref" in out || "oneOf" in out || out.type === "object" || out.type === "array") {
            out.$defs = converted;
        } else {
            return { oneOf: [out], $defs: converted };
        }
    }
    return out;
}

function convert(schema, where) {
    if (schema === true) return ANY_VALUE;
    if (schema === false) throw schemaError(where, "the schema `false` admits no value");
    if (!isObject(schema)) throw schemaError(where, "a schema must be an object or a boolean");
    for (const keyword of UNSUPPORTED) {
        if (keyword in schema) throw schemaError(where, `unsupported keyword \`${keyword}\``);
    }
    let node = { ...schema };

    if (Array.isArray(node.allOf)) {
        if (node.allOf.length !== 1) throw schemaError(where, "`allOf` with more than one schema");
        const [only] = node.allOf;
        delete node.allOf;
        if (!isObject(only)) throw schemaError(`${where}.allOf[0]`, "a schema must be an object");
        node = { ...only, ...node };
    }
    if (node.nullable === true) {
        delete node.nullable;
        return { oneOf: [convert(node, where), { type: "null" }] };
    }
    delete node.nullable;

    if (typeof node.$ref === "string") {
        const m = /^#\/(?:\$defs|definitions)\/([^/]+)$/.exec(node.$ref);
        if (!m) throw schemaError(where, `\`$ref\` ${JSON.stringify(node.$ref)} (only #/$defs/NAME)`);
        return { $ref: `#/$defs/${m[1]}` };
    }
    if (Array.isArray(node.anyOf) || Array.isArray(node.oneOf)) {
        const members = [...(node.anyOf ?? []), ...(node.oneOf ?? [])];
        if (members.length === 0) throw schemaError(where, "an empty `anyOf`/`oneOf`");
        const { anyOf, oneOf, ...rest } = node;
        const shared = stripAnnotations(rest);
        return {
            oneOf: members.map((member, i) => convert(
                isObject(member) ? { ...shared, ...member } : member, `${where}.anyOf[${i}]`)),
        };
    }
    if ("const" in node) return { const: node.const };
    if (Array.isArray(node.enum)) {
        if (node.enum.length === 0) throw schemaError(where, "an empty `enum`");
        if (node.enum.some((v) => v !== null && typeof v === "object"))
            throw schemaError(where, "an `enum` with object or array members");
        return { enum: node.enum };
    }

    let type = node.type;
    if (type === undefined) {
        // Infer the type from the keywords when it is left out.
        if ("properties" in node || "additionalProperties" in node) type = "object";
        else if ("items" in node || "prefixItems" in node) type = "array";
        else return ANY_VALUE;
    }
    if (Array.isArray(type)) {
        const unknown = type.find((t) => !ALL_TYPES.includes(t));
        if (unknown !== undefined) throw schemaError(where, `unknown type ${JSON.stringify(unknown)}`);
        if (type.length === 0) throw schemaError(where, "an empty `type` list");
        if (type.length === 1) type = type[0];
        else return { oneOf: [...new Set(type)].map((t) => convert({ ...node, type: t }, where)) };
    }
    if (!ALL_TYPES.includes(type)) throw schemaError(where, `unknown type ${JSON.stringify(type)}`);

    switch (type) {
        case "object": {
            const out = { type: "object" };
            if (node.properties !== undefined) {
                if (!isObject(node.properties)) throw schemaError(where, "`properties` is not an object");
                out.properties = {};
                for (const [name, prop] of Object.entries(node.properties))
                    out.properties[name] = convert(prop, `${where}.properties.${name}`);
            }
            if (node.additionalProperties === undefined) {
                if (out.properties === undefined) out.additionalProperties = true;
            } else if (node.additionalProperties === true || node.additionalProperties === false) {
                out.additionalProperties = node.additionalProperties;
            } else {
                out.additionalProperties = convert(node.additionalProperties, `${where}.additionalProperties`);
            }
            if (Number.isInteger(node.minProperties)) out.minProperties = node.minProperties;
            if (Number.isInteger(node.maxProperties)) out.maxProperties = node.maxProperties;
            return out;
        }
        case "array": {
            const out = { type: "array" };
            let prefix = node.prefixItems;
            let items = node.items;
            if (Array.isArray(items)) {
                prefix = items;
                items = node.additionalItems;
            }
            if (Array.isArray(prefix))
                out.prefixItems = prefix.map((s, i) => convert(s, `${where}.prefixItems[${i}]`));
            if (items === false) {
                out.maxItems = out.prefixItems?.length ?? 0;
            } else if (items !== undefined && items !== true) {
                out.items = convert(items, `${where}.items`);
            }
            if (Number.isInteger(node.minItems)) out.minItems = node.minItems;
            if (Number.isInteger(node.maxItems))
                out.maxItems = Math.min(node.maxItems, out.maxItems ?? Infinity);
            return out;
        }
        case "string": {
            if (FORMATS.includes(node.format)) return { type: "string", format: node.format };
            const out = { type: "string" };
            if (Number.isInteger(node.minLength)) out.minLength = node.minLength;
            if (Number.isInteger(node.maxLength)) out.maxLength = node.maxLength;
            return out;
        }
        case "integer": {
            let lo = node.minimum;
            let hi = node.maximum;
            if (typeof node.exclusiveMinimum === "number") lo = Math.max(lo ?? -Infinity, Math.floor(node.exclusiveMinimum) + 1);
            if (typeof node.exclusiveMaximum === "number") hi = Math.min(hi ?? Infinity, Math.ceil(node.exclusiveMaximum) - 1);
            if (typeof lo === "number" && typeof hi === "number") {
                lo = Math.ceil(lo);
                hi = Math.floor(hi);
                if (hi < lo) throw schemaError(where, "an integer range with no value");
                if (hi - lo < 256) return { enum: Array.from({ length: hi - lo + 1 }, (_, i) => lo + i) };
            }
            return { type: "integer" };
        }
        default:
            return { type };
    }
}

function stripAnnotations(node) {
    const { title, description, $schema, $id, $comment, default: _d, examples, ...rest } = node;
    return rest;
}

const grammarCache = new Map();
let jsonObjectGrammar = null;

async function grammarFor(responseFormat) {
    if (responseFormat === undefined || responseFormat === null) return null;
    if (!isObject(responseFormat) || typeof responseFormat.type !== "string")
        throw bad("response_format must be an object with a `type`", "response_format");
    switch (responseFormat.type) {
        case "text":
            return null;
        case "json_object":
            jsonObjectGrammar ??= await llama.getGrammarFor("json"); // any JSON object
            return jsonObjectGrammar;
        case "json_schema": {
            const spec = responseFormat.json_schema;
            if (!isObject(spec) || !isObject(spec.schema))
                throw bad("response_format.json_schema.schema must be a JSON schema object", "response_format");
            const key = JSON.stringify(spec.schema);
            let grammar = grammarCache.get(key);
            if (grammar === undefined) {
                const converted = toGrammarSchema(spec.schema);
                try {
                    grammar = await llama.createGrammarForJsonSchema(converted);
                } catch (e) {
                    throw schemaError("$", `grammar generation failed (${e?.message ?? e})`);
                }
                if (grammarCache.size >= 256) grammarCache.delete(grammarCache.keys().next().value);
                grammarCache.set(key, grammar);
            }
            return grammar;
        }
        default:
            throw bad(`response_format type ${JSON.stringify(responseFormat.type)} is not supported ` +
                "(text, json_object, json_schema)", "response_format");
    }
}

// ---------------------------------------------------------------------------------------------
// Requests

function messageText(content, i) {
    if (typeof content === "string") return content;
    if (Array.isArray(content)) {
        return content.map((part, j) => {
            if (isObject(part) && part.type === "text" && typeof part.text === "string") return part.text;
            throw bad(`messages[${i}].content[${j}]: only text parts are supported`, "messages");
        }).join("");
    }
    if (content === null || content === undefined) return "";
    throw bad(`messages[${i}].content must be a string or a list of text parts`, "messages");
}

function chatHistoryOf(messages) {
    if (!Array.isArray(messages) || messages.length === 0)
        throw bad("messages must be a non-empty list", "messages");
    const history = [];
    messages.forEach((message, i) => {
        if (!isObject(message)) throw bad(`messages[${i}] is not an object`, "messages");
        const text = messageText(message.content, i);
        switch (message.role) {
            case "system":
            case "developer":
                history.push({ type: "system", text });
                break;
            case "user":
                history.push({ type: "user", text });
                break;
            case "assistant":
                history.push({ type: "model", response: [text] });
                break;
            default:
                throw bad(`messages[${i}].role ${JSON.stringify(message.role)} is not supported ` +
                    "(system, developer, user, assistant)", "messages");
        }
    });
    history.push({ type: "model", response: [] });
    return history;
}

function numberParam(body, name, { min, max, integer = false } = {}) {
    const value = body[name];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== "number" || !Number.isFinite(value) || (integer && !Number.isInteger(value))
        || (min !== undefined && value < min) || (max !== undefined && value > max)) {
        const range = [min !== undefined ? `>= ${min}` : null, max !== undefined ? `<= ${max}` : null]
            .filter(Boolean).join(" and ");
        throw bad(`${name} must be ${integer ? "an integer" : "a number"}${range ? ` ${range}` : ""}`, name);
    }
    return value;
}

/** Validates a request body and builds what generation needs, before it is queued. */
async function prepare(body) {
    if (!isObject(body)) throw bad("the request body must be a JSON object");
    if (body.model !== undefined && typeof body.model !== "string") throw bad("model must be a string", "model");
    if (body.stream === true) throw bad("stream is not supported", "stream");
    const n = numberParam(body, "n", { min: 1, integer: true });
    if (n !== undefined && n !== 1) throw bad("only n = 1 is supported", "n");
    if (body.tools !== undefined && body.tools !== null && !(Array.isArray(body.tools) && body.tools.length === 0))
        throw bad("tools are not supported", "tools");
    const history = chatHistoryOf(body.messages);
    const temperature = numberParam(body, "temperature", { min: 0, max: 2 }) ?? 1;
    const topP = numberParam(body, "top_p", { min: 0, max: 1 });
    const seed = numberParam(body, "seed", { integer: true });
    const maxTokens = numberParam(body, "max_completion_tokens", { min: 1, integer: true })
        ?? numberParam(body, "max_tokens", { min: 1, integer: true });
    const frequencyPenalty = numberParam(body, "frequency_penalty", { min: -2, max: 2 });
    const presencePenalty = numberParam(body, "presence_penalty", { min: -2, max: 2 });
    let stop = body.stop ?? undefined;
    if (typeof stop === "string") stop = [stop];
    if (stop !== undefined && !(Array.isArray(stop) && stop.every((s) => typeof s === "string" && s !== "")))
        throw bad("stop must be a string or a list of non-empty strings", "stop");
    const grammar = await grammarFor(body.response_format);
    return {
        history, temperature, topP, seed, maxTokens, frequencyPenalty, presencePenalty, stop, grammar,
    };
}

let queue = Promise.resolve();
let current = null; // the AbortController of the running generation
let requestCount = 0;

/** Runs `job` after every job queued before it. */
function enqueue(job) {
    const run = queue.then(job, job);
    queue = run.catch(() => {});
    return run;
}

async function generate(request, signal) {
    if (signal.aborted) throw new HttpError(499, "the client went away");
    if (!reusePrefix) await sequence.clearHistory();
    const chat = new LlamaChat({ contextSequence: sequence, autoDisposeSequence: false });
    try {
        const promptTokens = chat.chatWrapper
            .generateContextState({ chatHistory: request.history })
            .contextText.tokenize(model.tokenizer).length;
        const room = context.contextSize - promptTokens;
        if (room < 1) {
            throw bad(`the prompt is ${promptTokens} tokens; this server's context holds ` +
                `${context.contextSize}`, "messages", "context_length_exceeded");
        }
        const maxTokens = Math.min(request.maxTokens ?? room, room);
        const penalties = request.frequencyPenalty || request.presencePenalty;
        const outputBefore = sequence.tokenMeter.usedOutputTokens;
        const { response, metadata } = await chat.generateResponse(request.history, {
            signal,
            maxTokens,
            temperature: request.temperature,
            topP: request.temperature > 0 ? request.topP : undefined,
            seed: request.temperature > 0
                ? (request.seed ?? Math.floor(Math.random() * 2 ** 31))
                : undefined,
            grammar: request.grammar ?? undefined,
            customStopTriggers: request.stop,
            repeatPenalty: penalties || repeatPenalty
                ? {
                    penalty: repeatPenalty ?? 1,
                    lastTokens: repeatLastN,
                    frequencyPenalty: request.frequencyPenalty ?? 0,
                    presencePenalty: request.presencePenalty ?? 0,
                }
                : false,
        });
        const completionTokens = sequence.tokenMeter.usedOutputTokens - outputBefore;
        return {
            content: request.grammar ? response.trim() : response,
            finishReason: metadata.stopReason === "maxTokens" ? "length" : "stop",
            promptTokens,
            completionTokens,
        };
    } finally {
        chat.dispose({ disposeSequence: false });
    }
}

async function chatCompletions(body, signal) {
    const request = await prepare(body);
    const started = performance.now();
    const result = await enqueue(async () => {
        if (stopping) throw new HttpError(503, "the server is shutting down", { type: "server_error" });
        const controller = new AbortController();
        const onAbort = () => controller.abort(signal.reason);
        signal.addEventListener("abort", onAbort);
        current = controller;
        try {
            return await generate(request, controller.signal);
        } finally {
            current = null;
            signal.removeEventListener("abort", onAbort);
        }
    });
    requestCount += 1;
    log(`#${requestCount} ${result.promptTokens}+${result.completionTokens} tokens, ` +
        `${result.finishReason}, ${((performance.now() - started) / 1000).toFixed(2)} s`);
    return {
        id: `chatcmpl-${requestCount}-${Date.now().toString(36)}`,
        object: "chat.completion",
        created: Math.floor(Date.now() / 1000),
        model: modelName,
        choices: [{
            index: 0,
            message: { role: "assistant", content: result.content },
            logprobs: null,
            finish_reason: result.finishReason,
        }],
        usage: {
            prompt_tokens: result.promptTokens,
            completion_tokens: result.completionTokens,
            total_tokens: result.promptTokens + result.completionTokens,
        },
    };
}

// ---------------------------------------------------------------------------------------------
// HTTP

const MAX_BODY = 32 << 20;

function readBody(req) {
    return new Promise((resolve, reject) => {
        const chunks = [];
        let size = 0;
        req.on("data", (chunk) => {
            size += chunk.length;
            if (size > MAX_BODY) {
                reject(new HttpError(413, `the request body is larger than ${MAX_BODY} bytes`));
                req.destroy();
                return;
            }
            chunks.push(chunk);
        });
        req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
        req.on("error", reject);
    });
}

function send(res, status, payload) {
    if (res.headersSent || res.destroyed) return;
    const text = JSON.stringify(payload);
    res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text) });
    res.end(text);
}

function sendError(res, e) {
    const err = e instanceof HttpError ? e
        : new HttpError(500, `internal error: ${e?.message ?? e}`, { type: "server_error" });
    if (err.status === 500) log(`error: ${e?.stack ?? e}`);
    send(res, err.status, { error: { message: err.message, type: err.type, param: err.param, code: err.code } });
}

async function handle(req, res) {
    const url = new URL(req.url ?? "/", "http://localhost");
    const route = url.pathname.replace(/\/+$/, "").replace(/^\/v1(?=\/)/, "");
    if (route === "/chat/completions") {
        if (req.method !== "POST") throw new HttpError(405, "use POST");
        const text = await readBody(req);
        let body;
        try {
            body = JSON.parse(text);
        } catch (e) {
            throw bad(`the request body is not JSON: ${e.message}`);
        }
        const gone = new AbortController();
        res.on("close", () => {
            if (!res.writableFinished) gone.abort(new HttpError(499, "the client went away"));
        });
        send(res, 200, await chatCompletions(body, gone.signal));
    } else if (route === "/models") {
        if (req.method !== "GET") throw new HttpError(405, "use GET");
        send(res, 200, { object: "list", data: [{ id: modelName, object: "model", created, owned_by: "local" }] });
    } else if (route === "/models/" + modelName) {
        send(res, 200, { id: modelName, object: "model", created, owned_by: "local" });
    } else if (route === "/health") {
        send(res, 200, { status: "ok" });
    } else {
        throw new HttpError(404, `no route ${req.method} ${url.pathname}`, { code: "not_found" });
    }
}

const server = http.createServer((req, res) => {
    handle(req, res).catch((e) => sendError(res, e));
});
server.keepAliveTimeout = 30_000;

let stopping = false;
async function shutdown(signal) {
    if (stopping) {
        process.exit(1); // a second signal: do not wait any longer
    }
    stopping = true;
    log(`${signal}: shutting down`);
    server.close();
    server.closeIdleConnections?.();
    current?.abort(new HttpError(503, "the server is shutting down", { type: "server_error" }));
    const force = setTimeout(() => server.closeAllConnections?.(), 2000);
    force.unref();
    try {
        await queue;
        await context.dispose();
        await model.dispose();
        await llama.dispose();
    } catch (e) {
        log(`while shutting down: ${e?.message ?? e}`);
    }
    process.exit(0);
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));

server.on("error", (e) => fail(`cannot listen on ${host}:${port}: ${e.message}`));
server.listen(port, host, () => {
    const { port: bound } = server.address();
    const shown = host.includes(":") ? `[${host}]` : host;
    process.stdout.write(`listening on http://${shown}:${bound}/v1\n`);
});
