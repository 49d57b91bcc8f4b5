// A chat-completions server that answers every request after a fixed service time, with no limit
// on how many it serves at once: what a batching server (vLLM, SGLang, a hosted API) looks like
// to a client. It counts requests and the TCP connections they came on (to check keep-alive).
//
//   node benches/servers/fixed_latency.mjs [--port 0] [--service-ms 50]
//
// Prints `listening on http://127.0.0.1:PORT/v1`; GET /stats gives {requests, connections}.
import http from "node:http";

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};
const port = Number(option("--port", "0"));
const serviceMs = Number(option("--service-ms", "50"));
let requests = 0;
let connections = 0;

// The reply's content satisfies the one-field card of the benchmark ({"true": boolean}).
const reply = JSON.stringify({
  choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content: '{"true": true}' } }],
  usage: { prompt_tokens: 100, completion_tokens: 5 },
});

const server = http.createServer((req, res) => {
  if (req.method === "GET" && req.url === "/stats") {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ requests, connections }));
    return;
  }
  req.resume();
  req.on("end", () => {
    requests += 1;
    setTimeout(() => {
      res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(reply) });
      res.end(reply);
    }, serviceMs);
  });
});
server.keepAliveTimeout = 60_000;
server.headersTimeout = 65_000;
server.maxRequestsPerSocket = 0;
server.on("connection", () => {
  connections += 1;
});
server.listen(port, "127.0.0.1", () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}/v1`);
});
