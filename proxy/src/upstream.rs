//! Connections to upstreams: HTTPS with rustls (the system's roots, plus an upstream's own
//! `ca`), HTTP/1.1 and HTTP/2 by ALPN, plain HTTP for servers on a private network; pooled.

use crate::config::{ProxyConfig, Upstream};
use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::CertificateDer;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use thiserror::Error;

pub type BoxError = Box<dyn std::error::Error + Send + Sync>;
pub type Body = BoxBody<Bytes, BoxError>;
pub type HttpClient = Client<HttpsConnector<HttpConnector>, Body>;

#[derive(Debug, Error)]
pub enum TlsError {
    #[error("{path}: {message}; give a PEM file of the certificates to trust")]
    Ca { path: PathBuf, message: String },
    #[error("TLS setup failed: {0}")]
    Setup(String),
}

/// One pooled client per set of trusted roots: the system's, and each `ca` an upstream adds.
pub struct Clients {
    default: HttpClient,
    by_ca: HashMap<PathBuf, HttpClient>,
}

impl Clients {
    pub fn new(config: &ProxyConfig) -> Result<Clients, TlsError> {
        let system = system_roots();
        let default = client(config, system.clone(), None)?;
        let mut by_ca = HashMap::new();
        for u in config.upstreams.values() {
            if let Some(ca) = &u.ca {
                if !by_ca.contains_key(ca) {
                    by_ca.insert(ca.clone(), client(config, system.clone(), Some(ca))?);
                }
            }
        }
        Ok(Clients { default, by_ca })
    }

    pub fn for_upstream(&self, u: &Upstream) -> &HttpClient {
        u.ca.as_ref()
            .and_then(|ca| self.by_ca.get(ca))
            .unwrap_or(&self.default)
    }
}

/// The system's root certificates; none (with a warning) where it has none, so an upstream
/// with its own `ca` still works.
fn system_roots() -> Arc<rustls::RootCertStore> {
    let mut roots = rustls::RootCertStore::empty();
    let found = rustls_native_certs::load_native_certs();
    for e in &found.errors {
        tracing::debug!("llmctl proxy: reading the system's certificates: {e}");
    }
    let (added, _) = roots.add_parsable_certificates(found.certs);
    if added == 0 {
        tracing::warn!(
            "llmctl proxy: no system root certificates found; HTTPS upstreams need a `ca` in [proxy.upstreams.NAME]"
        );
    }
    Arc::new(roots)
}

fn read_ca(path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let bad = |message: String| TlsError::Ca {
        path: path.to_path_buf(),
        message,
    };
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| bad(e.to_string()))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| bad(e.to_string()))?;
    if certs.is_empty() {
        return Err(bad("no certificate in it".into()));
    }
    Ok(certs)
}

fn client(
    config: &ProxyConfig,
    system: Arc<rustls::RootCertStore>,
    ca: Option<&PathBuf>,
) -> Result<HttpClient, TlsError> {
    let mut roots = (*system).clone();
    if let Some(path) = ca {
        for cert in read_ca(path)? {
            roots.add(cert).map_err(|e| TlsError::Ca {
                path: path.clone(),
                message: e.to_string(),
            })?;
        }
    }
    let tls = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| TlsError::Setup(e.to_string()))?
    .with_root_certificates(roots)
    .with_no_client_auth();
    let mut http = HttpConnector::new();
    http.enforce_http(false);
    http.set_nodelay(true);
    http.set_connect_timeout(Some(config.connect_timeout));
    let https = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(tls)
        .https_or_http()
        .enable_http1()
        .enable_http2()
        .wrap_connector(http);
    Ok(Client::builder(TokioExecutor::new())
        .pool_max_idle_per_host(256)
        .pool_idle_timeout(std::time::Duration::from_secs(90))
        .build(https))
}

/// An error with its causes, outermost first.
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut why = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        why = format!("{why}: {s}");
        source = s.source();
    }
    why
}
