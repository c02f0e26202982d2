//! A small HTTP/1 client for talking to the fake provider.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::{connect::HttpConnector, Client};
use hyper_util::rt::TokioExecutor;
use serde_json::Value;
use std::time::Duration;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum HttpError {
    #[error("request to {url} timed out after {after:?}")]
    Timeout { url: String, after: Duration },
    #[error("request to {url} failed: {message}")]
    Failed { url: String, message: String },
}

#[derive(Debug, Clone)]
pub struct HttpResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Bytes,
}

impl HttpResponse {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }
}

#[derive(Clone)]
pub struct HttpClient {
    inner: Client<HttpConnector, Full<Bytes>>,
}

impl Default for HttpClient {
    fn default() -> Self {
        Self::new()
    }
}

impl HttpClient {
    pub fn new() -> HttpClient {
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        HttpClient {
            inner: Client::builder(TokioExecutor::new())
                .pool_max_idle_per_host(256)
                .build(connector),
        }
    }

    async fn send(
        &self,
        method: &str,
        url: &str,
        body: Bytes,
        headers: &[(&str, &str)],
        timeout: Duration,
    ) -> Result<HttpResponse, HttpError> {
        let failed = |message: String| HttpError::Failed {
            url: url.to_string(),
            message,
        };
        let mut req = hyper::Request::builder()
            .method(method)
            .uri(url)
            .header("content-type", "application/json");
        for (name, value) in headers {
            req = req.header(*name, *value);
        }
        let req = req
            .body(Full::new(body))
            .map_err(|e| failed(e.to_string()))?;
        let work = async {
            let resp = self
                .inner
                .request(req)
                .await
                .map_err(|e| failed(e.to_string()))?;
            let status = resp.status().as_u16();
            let headers = resp
                .headers()
                .iter()
                .map(|(n, v)| (n.as_str().to_string(), v.to_str().unwrap_or("").to_string()))
                .collect();
            let body = resp
                .into_body()
                .collect()
                .await
                .map_err(|e| failed(e.to_string()))?
                .to_bytes();
            Ok(HttpResponse {
                status,
                headers,
                body,
            })
        };
        tokio::time::timeout(timeout, work)
            .await
            .map_err(|_| HttpError::Timeout {
                url: url.to_string(),
                after: timeout,
            })?
    }

    pub async fn post_json(
        &self,
        url: &str,
        body: &Value,
        timeout: Duration,
    ) -> Result<HttpResponse, HttpError> {
        self.post_json_with(url, body, &[], timeout).await
    }

    pub async fn post_json_with(
        &self,
        url: &str,
        body: &Value,
        headers: &[(&str, &str)],
        timeout: Duration,
    ) -> Result<HttpResponse, HttpError> {
        self.send("POST", url, Bytes::from(body.to_string()), headers, timeout)
            .await
    }

    pub async fn get(&self, url: &str, timeout: Duration) -> Result<HttpResponse, HttpError> {
        self.send("GET", url, Bytes::new(), &[], timeout).await
    }
}
