//! Judged metrics: a prompt card of the judge engine ([`crate::engines::judge`]) plus a scoring
//! rule over its replies. The rules here are pure functions of a row's inputs and the judge's
//! validated JSON reply, so they are tested from recorded replies without a server.
//!
//! * [`citation_support`]: does a cited span support its claim (fully / partially / not), with
//!   the checks a reviewer would make by hand done automatically;
//! * [`answer_match`]: does an answer match the reference answer to its question;
//! * [`claims`]: an answer split into atomic claims, by the judge or by a documented rule;
//! * [`custom`]: a judge the user defines as data (prompt, named inputs, reply schema);
//! * [`g_eval`]: a rubric judge with the user's criteria (G-Eval), probability-weighted;
//! * [`nuggets`]: nuggets written from a question's sources and assessed against answers
//!   (TREC 2024 RAG track's AutoNuggetizer);
//! * [`rag`]: Ragas' judged RAG metrics (faithfulness, answer relevancy, context precision,
//!   context utilization, context recall).

pub mod agreement;
pub mod answer_match;
pub mod citation_recall;
pub mod citation_support;
pub mod claim_checks;
pub mod claims;
pub mod custom;
pub mod g_eval;
pub mod nuggets;
pub mod rag;
pub mod relevance;
pub mod review;
