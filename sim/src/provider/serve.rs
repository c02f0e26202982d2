//! The fake provider over HTTP: its routes (the providers' APIs, `/stats`, `/reset`,
//! `/faults`) and a server on loopback that serves until dropped.

use super::{Api, Fault, Provider, ProviderConfig};
use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{HeaderValue, Response, StatusCode, Uri};
use axum::routing::{get, post};
use axum::Router;
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::sync::Arc;

fn json_response(status: StatusCode, v: Value) -> Response<Body> {
    let mut r = Response::new(Body::from(v.to_string()));
    *r.status_mut() = status;
    r.headers_mut()
        .insert("content-type", HeaderValue::from_static("application/json"));
    r
}

async fn openai(State(p): State<Arc<Provider>>, body: Bytes) -> Response<Body> {
    p.handle(Api::OpenAi, false, body).await
}

async fn responses(State(p): State<Arc<Provider>>, body: Bytes) -> Response<Body> {
    p.handle(Api::OpenAi, true, body).await
}

/// Azure OpenAI's deployments: `POST /openai/deployments/{deployment}/chat/completions` with an
/// `api-version` (else 404, as Azure answers a path it has no version of). The deployment is
/// the model, whatever the body says; the answers, headers and refusals are Azure's.
async fn azure(
    State(p): State<Arc<Provider>>,
    Path(deployment): Path<String>,
    uri: Uri,
    body: Bytes,
) -> Response<Body> {
    let versioned = uri.query().is_some_and(|q| {
        q.split('&')
            .any(|kv| kv.starts_with("api-version=") && kv.len() > 12)
    });
    if !versioned {
        return super::shapes::error(Api::Azure, 404, "404", "Resource not found", Some("404"));
    }
    let body = match serde_json::from_slice::<Value>(&body) {
        Ok(mut v @ Value::Object(_)) => {
            v["model"] = Value::String(deployment);
            Bytes::from(v.to_string())
        }
        _ => body,
    };
    p.handle(Api::Azure, false, body).await
}

async fn anthropic(State(p): State<Arc<Provider>>, body: Bytes) -> Response<Body> {
    p.handle(Api::Anthropic, false, body).await
}

async fn models() -> Response<Body> {
    json_response(
        StatusCode::OK,
        json!({"object": "list", "data": [{"id": "fake-model", "object": "model", "owned_by": "fake"}]}),
    )
}

/// The Responses API over a WebSocket, as Codex tries first: counted, and refused (the fake
/// provider serves it over HTTPS only), which a client takes as a failed connection.
async fn websocket(State(p): State<Arc<Provider>>) -> Response<Body> {
    p.count_websocket();
    json_response(
        StatusCode::METHOD_NOT_ALLOWED,
        json!({"error": {"message": "the fake provider serves the Responses API over HTTPS only", "type": "invalid_request_error"}}),
    )
}

async fn stats(State(p): State<Arc<Provider>>) -> Response<Body> {
    json_response(StatusCode::OK, p.stats().to_json())
}

async fn reset(State(p): State<Arc<Provider>>) -> Response<Body> {
    p.reset();
    json_response(StatusCode::OK, json!({"reset": true}))
}

async fn set_faults(State(p): State<Arc<Provider>>, body: Bytes) -> Response<Body> {
    let specs: Vec<String> = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => {
            return json_response(
                StatusCode::BAD_REQUEST,
                json!({"error": format!("expected a JSON array of fault strings like [\"status=503,share=0.5\"]: {e}")}),
            )
        }
    };
    match specs
        .iter()
        .map(|s| Fault::parse(s))
        .collect::<Result<Vec<_>, _>>()
    {
        Ok(faults) => {
            let n = faults.len();
            p.set_faults(faults);
            json_response(StatusCode::OK, json!({"faults": n}))
        }
        Err(e) => json_response(StatusCode::BAD_REQUEST, json!({"error": e.to_string()})),
    }
}

async fn not_found() -> Response<Body> {
    json_response(
        StatusCode::NOT_FOUND,
        json!({"error": {"message": "unknown path; the fake provider serves POST /v1/chat/completions, POST /v1/responses, POST /v1/messages, POST /openai/deployments/{deployment}/chat/completions?api-version=V, POST /model/{id}/converse (and converse-stream, invoke, invoke-with-response-stream), POST /v1beta/models/{model}:generateContent (and streamGenerateContent), POST /v1/projects/{p}/locations/{l}/publishers/{google|anthropic}/models/{model}:{method}, GET /v1/models, GET /stats, POST /reset, POST /faults", "type": "not_found_error"}}),
    )
}

pub fn router(p: Arc<Provider>) -> Router {
    Router::new()
        .route("/v1/chat/completions", post(openai))
        .route("/v1/responses", post(responses).get(websocket))
        .route("/v1/messages", post(anthropic))
        .route("/v1/models", get(models))
        .route(
            "/openai/deployments/{deployment}/chat/completions",
            post(azure),
        )
        .route("/model/{model}/{action}", post(super::bedrock::serve))
        .route("/{version}/models/{call}", post(super::google::gemini))
        .route(
            "/{version}/projects/{project}/locations/{location}/publishers/{publisher}/models/{call}",
            post(super::google::vertex),
        )
        .route(
            "/{version}/publishers/{publisher}/models/{call}",
            post(super::google::vertex_express),
        )
        .route("/stats", get(stats))
        .route("/reset", post(reset))
        .route("/faults", post(set_faults))
        .fallback(not_found)
        .with_state(p)
}

/// A fake provider serving in this process until dropped.
pub struct FakeProvider {
    pub addr: SocketAddr,
    pub provider: Arc<Provider>,
    task: tokio::task::JoinHandle<()>,
}

impl FakeProvider {
    /// Binds `listen` (loopback only) and serves.
    pub async fn start(
        config: ProviderConfig,
        listen: SocketAddr,
    ) -> std::io::Result<FakeProvider> {
        if !listen.ip().is_loopback() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("--listen {listen} is not a loopback address; the fake provider serves only 127.0.0.0/8 or ::1"),
            ));
        }
        let listener = tokio::net::TcpListener::bind(listen).await?;
        let addr = listener.local_addr()?;
        let provider = Arc::new(Provider::new(config));
        let app = router(provider.clone());
        // Small writes (a stream's events) go out at once, not held for the peer's ACK.
        let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
            let _ = tcp.set_nodelay(true);
        });
        let task = tokio::spawn(async move {
            if let Err(e) = axum::serve(listener, app).await {
                tracing::error!("fake provider stopped: {e}");
            }
        });
        Ok(FakeProvider {
            addr,
            provider,
            task,
        })
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

impl Drop for FakeProvider {
    fn drop(&mut self) {
        self.task.abort();
    }
}
