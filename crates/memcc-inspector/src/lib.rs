//! `memcc ui`: a local web inspector a person opens to see what MemCC holds and why.
//!
//! The binary serves a small single-page app (built into it: nothing is fetched at run time)
//! and a read-only JSON API over the `memcc` facade: agents and sessions, a session's summary
//! DAG, the prompt MemCC would assemble with the record behind each recalled line, memory
//! records with filters, search and supersession history, and knowledge-graph triples. The one
//! write is forget, which the page confirms first. Like the MCP server and the Node addon it
//! converts and calls; the logic stays in the engine (ARCHITECTURE.md).
//!
//! It listens on loopback only, answers only requests addressed to a loopback host name (so a
//! web page cannot reach it through DNS rebinding), and accepts the forget POST only with a
//! custom header (which a cross-site form or fetch cannot send without a preflight it never
//! gets).

// No panic on a path input can reach: outside tests, `unwrap`, `expect` and `panic!` are errors
// (a pattern in the source goes through `memcc_core::text::static_regex`).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

mod api;

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::Router;
use axum::extract::Request;
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};

use memcc::Memcc;

#[derive(Debug, thiserror::Error)]
pub enum InspectorError {
    #[error("the inspector listens on loopback only, not {0}")]
    NotLoopback(IpAddr),
    #[error(
        "{0} is in use (another `memcc ui`, or another program): choose a port with --port N, or --port 0 for any free one"
    )]
    PortInUse(SocketAddr),
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// What every handler reads.
#[derive(Clone)]
pub(crate) struct AppState {
    pub memcc: Arc<Memcc>,
    /// The agent pages show when the URL names none.
    pub agent: String,
}

/// The header the page sends with every write.
pub const WRITE_HEADER: &str = "x-memcc-inspector";

const INDEX_HTML: &str = include_str!("../assets/index.html");
const APP_JS: &str = include_str!("../assets/app.js");
const STYLE_CSS: &str = include_str!("../assets/style.css");

/// The inspector's routes: the page and its assets, and the JSON API under `/api`.
pub fn router(memcc: Arc<Memcc>, agent: String) -> Router {
    let state = AppState { memcc, agent };
    Router::new()
        .route("/", get(|| async { asset("text/html; charset=utf-8", INDEX_HTML) }))
        .route("/app.js", get(|| async { asset("text/javascript; charset=utf-8", APP_JS) }))
        .route("/style.css", get(|| async { asset("text/css; charset=utf-8", STYLE_CSS) }))
        .route("/api/overview", get(api::overview))
        .route("/api/dag", get(api::dag))
        .route("/api/node/{id}", get(api::node))
        .route("/api/assemble", get(api::assemble))
        .route("/api/memory", get(api::memory))
        .route("/api/memory/facets", get(api::facets))
        .route("/api/memory/{id}/history", get(api::history))
        .route("/api/memory/{id}/statements", get(api::statements))
        .route("/api/memory/{id}/forget", post(api::forget))
        .route("/api/memory/{id}/edit", post(api::edit))
        .route("/api/memory/{id}/pin", post(api::pin))
        .route("/api/triples", get(api::triples))
        .fallback(|| async { (StatusCode::NOT_FOUND, "not found") })
        .layer(middleware::from_fn(guard))
        .with_state(state)
}

fn asset(content_type: &'static str, body: &'static str) -> Response {
    ([(header::CONTENT_TYPE, content_type), (header::CACHE_CONTROL, "no-cache")], body).into_response()
}

/// Only requests addressed to this machine by a loopback name; writes only with [`WRITE_HEADER`].
async fn guard(request: Request, next: Next) -> Response {
    if !loopback_host(request.headers()) {
        return (StatusCode::FORBIDDEN, "the inspector answers requests to localhost only").into_response();
    }
    if request.method() != axum::http::Method::GET && !request.headers().contains_key(WRITE_HEADER) {
        return (StatusCode::FORBIDDEN, "writes come from the inspector's page only").into_response();
    }
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    headers.insert(header::X_FRAME_OPTIONS, header::HeaderValue::from_static("DENY"));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        header::HeaderValue::from_static("default-src 'self'; img-src 'self' data:; frame-ancestors 'none'"),
    );
    response
}

fn loopback_host(headers: &HeaderMap) -> bool {
    let Some(host) = headers.get(header::HOST).and_then(|h| h.to_str().ok()) else {
        return false;
    };
    // Strip the port; keep IPv6 brackets' content.
    let name = match host.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or(""),
        None => host.rsplit_once(':').map_or(host, |(name, _)| name),
    };
    name.eq_ignore_ascii_case("localhost") || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// Serve the inspector at `addr` (loopback only; port 0 picks a free one) until Ctrl-C.
/// `ready` gets the bound address once it listens.
pub async fn serve(
    memcc: Arc<Memcc>,
    agent: String,
    addr: SocketAddr,
    ready: impl FnOnce(SocketAddr),
) -> Result<(), InspectorError> {
    if !addr.ip().is_loopback() {
        return Err(InspectorError::NotLoopback(addr.ip()));
    }
    let listener = tokio::net::TcpListener::bind(addr).await.map_err(|e| match e.kind() {
        std::io::ErrorKind::AddrInUse => InspectorError::PortInUse(addr),
        _ => InspectorError::Io(e),
    })?;
    ready(listener.local_addr()?);
    axum::serve(listener, router(memcc, agent))
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    Ok(())
}
