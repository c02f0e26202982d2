// What a request's path says about the call (conformance/paths.json): clouds name the model in
// the path, not the body (Bedrock's /model/{id}/invoke, Gemini's and Vertex AI's
// .../models/{model}:generateContent, Azure OpenAI's /openai/deployments/{name}/...), some paths
// ask for a stream, and token counting is not a call to limit.

export interface PathCall {
  limited: boolean;
  /** null: the path names none (the body's model is the one). */
  model: string | null;
  /** true: the path asks for a stream. */
  stream: boolean;
}

// Bedrock runtime operations, and whether each streams.
const BEDROCK_OPS = new Map([
  ["invoke", false],
  ["invoke-with-response-stream", true],
  ["converse", false],
  ["converse-stream", true],
]);
// Methods on a Google-style model resource that generate nothing, and Vertex AI's Claude token
// counting, a model of its own.
const COUNTING_METHODS = new Set(["countTokens", "computeTokens"]);
const COUNTING_MODELS = new Set(["count-tokens"]);
const COUNTING_SUFFIXES = ["/count_tokens", "/responses/input_tokens"];

function decoded(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

function after(path: string, marker: string, last: boolean): string | null {
  const i = last ? path.lastIndexOf(marker) : path.indexOf(marker);
  return i < 0 ? null : path.slice(i + marker.length);
}

/** The call a request's path (without its query, as sent: still percent-encoded) names. */
export function pathCall(path: string): PathCall {
  path = path.replace(/\/+$/, "");
  if (COUNTING_SUFFIXES.some((s) => path.endsWith(s))) {
    return { limited: false, model: null, stream: false };
  }
  const bedrock = after(path, "/model/", true);
  if (bedrock !== null) {
    const slash = bedrock.indexOf("/");
    const [model, op] = slash < 0 ? [bedrock, ""] : [bedrock.slice(0, slash), bedrock.slice(slash + 1)];
    const stream = BEDROCK_OPS.get(op);
    if (model && stream !== undefined) {
      return { limited: true, model: decoded(model), stream };
    }
  }
  const google = after(path, "/models/", true);
  if (google !== null && !google.includes("/")) {
    const colon = google.indexOf(":");
    const method = colon < 0 ? "" : google.slice(colon + 1);
    if (method) {
      const model = decoded(google.slice(0, colon));
      if (COUNTING_METHODS.has(method) || COUNTING_MODELS.has(model)) {
        return { limited: false, model: null, stream: false };
      }
      return { limited: true, model: model || null, stream: method.startsWith("stream") };
    }
  }
  const azure = after(path, "/openai/deployments/", false);
  if (azure !== null) {
    const deployment = azure.split("/")[0];
    if (deployment) {
      return { limited: true, model: decoded(deployment), stream: false };
    }
  }
  return { limited: true, model: null, stream: false };
}
