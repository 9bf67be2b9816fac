//! The desktop app driven through egui_kittest (no GPU, no window), in one test binary: one link of
//! egui instead of one per file. `cargo test -p sse-replay-app --test gui daily::` runs one module.

mod common;

mod app;
mod bedrock;
mod corpus;
mod daily;
mod forms;
mod honest;
mod inspect;
mod keys;
mod layout;
mod restart;
mod secrets;
mod staged;
