/**
 * Amazon Bedrock through the AWS SDK for JavaScript v3, limited by llmctl:
 *
 *     import { BedrockRuntimeClient, ConverseCommand } from "@aws-sdk/client-bedrock-runtime";
 *     import { Client, aws } from "llmctl-client";
 *
 *     const bedrock = aws.limit(new BedrockRuntimeClient({}), { client: new Client(), key: "bedrock/{model}" });
 *     await bedrock.send(new ConverseCommand({ modelId, messages, inferenceConfig: { maxTokens: 512 } }));
 *
 * The SDK signs every request (SigV4, the host included), so neither `limitedFetch` nor the
 * proxy can stand in front of it. `limit` adds a middleware to the client's stack instead, for
 * Converse, ConverseStream, InvokeModel and InvokeModelWithResponseStream, between the SDK's
 * retries and its signing, so it runs once for every attempt:
 *
 * - before the attempt is signed and sent, a lease is acquired on the key (`{model}`: the model
 *   or inference-profile id from the request's path; `{region}`: the client's region), estimated
 *   from the body (messages, system, `inferenceConfig.maxTokens` or `max_tokens`); a lease not
 *   granted is thrown as a `ThrottlingException` (status 429, `error.llmctl` says why), so code
 *   that handles Bedrock's throttles handles it;
 * - after the attempt, the lease is reported with the status, the error's name and message and
 *   the usage (`usage` of a Converse answer, InvokeModel's token-count headers, a stream's
 *   `metadata` event or invocation metrics as the caller reads the stream);
 * - the SDK's retry strategy gives way to the daemon's advice for these calls: an attempt is
 *   retried when, and after the delay, the daemon says (at most `maxRetries` times), and the
 *   SDK's own retry quota is left to the client's other calls. One retry layer, which every
 *   process on the host shares.
 *
 * Other commands pass untouched. `limit` on a client already limited changes nothing.
 */

import type { Advice, Client, Lease, ReportOptions } from "./client.js";
import { EventWatcher } from "./answer.js";
import { NotGranted } from "./errors.js";
import { estimateRequest } from "./estimate.js";
import { checkKeyTemplate, reportSafely } from "./fetch.js";
import { pathCall } from "./paths.js";

/** The Bedrock runtime commands that spend a model's quota. */
export const LIMITED_COMMANDS: ReadonlySet<string> = new Set([
  "ConverseCommand",
  "ConverseStreamCommand",
  "InvokeModelCommand",
  "InvokeModelWithResponseStreamCommand",
]);

export interface AwsLimitOptions {
  client: Client;
  /** The quota's name; `{model}` is the call's model or inference profile, `{region}` the
   * client's region (default "bedrock/{model}"). */
  key?: string;
  priority?: number;
  /** How long each acquire may wait in the daemon, in ms (default an hour). */
  maxWait?: number;
  runId?: string;
  profile?: string;
  /** At most this many retries of one call on the daemon's advice (default 20). */
  maxRetries?: number;
  /** Called with the key and the daemon's advice after every report. */
  onAdvice?: (key: string, advice: Advice) => void;
}

/** The parts of a client of the AWS SDK v3 `limit` uses. */
export interface AwsClientLike {
  middlewareStack: {
    addRelativeTo(middleware: unknown, options: Record<string, unknown>): void;
  };
  config: Record<string, unknown>;
}

const MIDDLEWARE = "llmctlMiddleware";
const LIMITED = Symbol.for("llmctl.aws.limited");
/** On an error a limited attempt threw: the daemon's advice (null: the daemon took no report). */
const ADVICE = Symbol.for("llmctl.aws.advice");
/** On a retry token this module made. */
const OURS = Symbol.for("llmctl.aws.token");
const MAX_ERROR_MESSAGE = 4096;
/** InvokeModel's usage headers: input, output, cache read and cache written. */
const TOKEN_HEADERS: Names = [
  "x-amzn-bedrock-input-token-count",
  "x-amzn-bedrock-output-token-count",
  "x-amzn-bedrock-cache-read-input-token-count",
  "x-amzn-bedrock-cache-write-input-token-count",
];
const CONVERSE_USAGE: Names = ["inputTokens", "outputTokens", "cacheReadInputTokens", "cacheWriteInputTokens"];
const METRICS_USAGE: Names = ["inputTokenCount", "outputTokenCount", "cacheReadInputTokenCount", "cacheWriteInputTokenCount"];

type Names = [string, string, string, string];
type Usage = [number, number, number];

function count(v: unknown): number | null {
  if (typeof v === "number" && Number.isInteger(v) && v >= 0) {
    return v;
  }
  if (typeof v === "string" && /^\s*\d+\s*$/.test(v)) {
    return Number(v.trim());
  }
  return null;
}

/** (all input, cached input, output) from Bedrock's counts of input, output, cache read and
 * cache written under `names`: Bedrock's input leaves out what the cache read and wrote, the
 * daemon's counts all of it, the read part as cached. */
export function bedrockCounted(fields: unknown, names: Names): Usage | null {
  if (!fields || typeof fields !== "object") {
    return null;
  }
  const f = fields as Record<string, unknown>;
  const inp = count(f[names[0]]);
  const out = count(f[names[1]]);
  if (inp === null || out === null) {
    return null;
  }
  const read = count(f[names[2]]) ?? 0;
  const written = count(f[names[3]]) ?? 0;
  return [inp + read + written, read, out];
}

/** Usage from Converse's `usage` (or a ConverseStream `metadata` event's). */
export function converseUsage(parsed: unknown): Usage | null {
  return bedrockCounted((parsed as { usage?: unknown } | null)?.usage, CONVERSE_USAGE);
}

/** Usage from the `amazon-bedrock-invocationMetrics` of InvokeModel's last stream chunk. */
export function metricsUsage(chunk: unknown): Usage | null {
  return bedrockCounted((chunk as Record<string, unknown> | null)?.["amazon-bedrock-invocationMetrics"], METRICS_USAGE);
}

/** Usage from InvokeModel's token-count headers (names in any case). */
export function headersUsage(headers: Record<string, unknown> | undefined): Usage | null {
  const lower: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(headers ?? {})) {
    lower[k.toLowerCase()] = v;
  }
  return bedrockCounted(lower, TOKEN_HEADERS);
}

function bodyText(body: unknown): string {
  if (typeof body === "string") {
    return body;
  }
  if (body instanceof Uint8Array) {
    return new TextDecoder().decode(body);
  }
  return "";
}

function usageReport(u: Usage | null): Partial<ReportOptions> {
  return u ? { inputTokens: u[0], cachedInputTokens: u[1], outputTokens: u[2], usageKnown: true } : {};
}

/** An error of an attempt, in the daemon's terms. */
function failure(e: unknown): ReportOptions {
  const err = (e ?? {}) as { name?: string; message?: string; $metadata?: { httpStatusCode?: number }; $response?: { headers?: Record<string, string> } };
  const status = err.$metadata?.httpStatusCode ?? 0;
  const name = String(err.name ?? "Error");
  const lowered = name.toLowerCase();
  const errorType = status ? name : lowered.includes("timeout") ? "timeout" : lowered.includes("abort") ? "cancelled" : "connection";
  return { status, headers: err.$response?.headers, errorType, errorMessage: String(err.message ?? "").slice(0, MAX_ERROR_MESSAGE) };
}

/** A lease not granted, as Bedrock's own throttle. */
function throttled(e: NotGranted): Error {
  const err = new Error(`Too many requests, please wait before trying again. (${e.message})`) as Error & Record<string | symbol, unknown>;
  err.name = "ThrottlingException";
  err.$fault = "client";
  err.$metadata = { httpStatusCode: 429 };
  err.llmctl = { reason: e.reason, reasonCode: e.reasonCode, notBefore: e.notBefore, waitedMs: e.waitedMs };
  // Not retried: the daemon already waited as long as it was let.
  err[ADVICE] = null;
  return err;
}

/** An exception inside a Bedrock event stream, by its name with a lower-case first letter: the
 * status Bedrock gives the same exception as an answer (conformance/bedrock_stream_errors.json). */
const STREAM_ERROR_STATUS: Record<string, number> = {
  throttlingException: 429,
  serviceUnavailableException: 503,
  internalServerException: 500,
  modelStreamErrorException: 424,
  modelTimeoutException: 408,
  validationException: 400,
  serviceQuotaExceededException: 400,
};

/** The status an exception inside a stream stands for (null: one not known, the stream's own). */
export function streamErrorStatus(name: string): number | null {
  const key = name.slice(0, 1).toLowerCase() + name.slice(1);
  return Object.hasOwn(STREAM_ERROR_STATUS, key) ? (STREAM_ERROR_STATUS[key] ?? null) : null;
}

/** A stream's events as the caller reads them, watched for the usage and the error; the attempt
 * is reported once, when the stream ends, fails or is left. */
function watched(
  events: AsyncIterable<Record<string, unknown>>,
  lease: Lease,
  status: number,
  headers: Record<string, string> | undefined,
  converse: boolean,
  onAdvice: (advice: Advice) => void,
): AsyncIterable<Record<string, unknown>> {
  return {
    [Symbol.asyncIterator]() {
      const it = events[Symbol.asyncIterator]();
      const w = new EventWatcher();
      let usage: Usage | null = null;
      let output = false;
      let reported = false;
      const report = async (extra: Partial<ReportOptions>) => {
        if (reported) {
          return;
        }
        reported = true;
        await reportSafely(lease, { status, headers, ...usageReport(usage ?? w.finish().usage), streamStarted: output, ...extra }, onAdvice);
      };
      return {
        async next() {
          let r: IteratorResult<Record<string, unknown>>;
          try {
            r = await it.next();
          } catch (e) {
            const f = failure(e);
            const errorType = f.errorType === "connection" ? String((e as Error)?.name ?? "stream_error") : (f.errorType ?? "");
            // A throttle inside the stream is a rate limit as any other.
            await report({ status: streamErrorStatus(errorType) ?? status, errorType, errorMessage: f.errorMessage });
            throw e;
          }
          if (r.done) {
            await report({});
            return r;
          }
          const ev = r.value ?? {};
          if (converse) {
            usage = converseUsage(ev.metadata) ?? usage;
            output ||= "contentBlockDelta" in ev;
          } else {
            const bytes = (ev.chunk as { bytes?: Uint8Array } | undefined)?.bytes;
            if (bytes) {
              const text = new TextDecoder().decode(bytes);
              w.feedEvent("chunk", text);
              output ||= w.outcome.output;
            }
          }
          for (const [name, v] of Object.entries(ev)) {
            if (/exception$/i.test(name) && v && typeof v === "object") {
              await report({
                status: streamErrorStatus(name) ?? status,
                errorType: name.replace(/^./, (c) => c.toUpperCase()),
                errorMessage: String((v as { message?: unknown }).message ?? ""),
              });
            }
          }
          return r;
        },
        async return(value?: unknown) {
          await report({ errorType: "cancelled" });
          return (await it.return?.(value)) ?? { done: true, value: undefined };
        },
      };
    },
  };
}

/** A retry strategy that follows the daemon's advice for limited attempts and leaves the rest,
 * and its retry quota, to the client's own. */
function advisedStrategy(inner: Record<string, (...a: unknown[]) => unknown> | undefined, maxRetries: number) {
  return {
    acquireInitialRetryToken: (scope: string) =>
      inner?.acquireInitialRetryToken ? inner.acquireInitialRetryToken(scope) : { getRetryCount: () => 0, getRetryDelay: () => 0 },
    refreshRetryTokenForRetry: async (token: { getRetryCount(): number } & Record<symbol, unknown>, info: { error: Record<symbol, unknown> }) => {
      const err = info?.error;
      if (!err || !(ADVICE in err)) {
        if (!inner?.refreshRetryTokenForRetry) {
          throw err;
        }
        return inner.refreshRetryTokenForRetry(token, info);
      }
      const advice = err[ADVICE] as Advice | null;
      const n = token[OURS] ? token.getRetryCount() : 0;
      if (advice?.action !== "retry" || n >= maxRetries) {
        throw err;
      }
      return { [OURS]: true, getRetryCount: () => n + 1, getRetryDelay: () => advice.retryAfterMs };
    },
    recordSuccess: (token: Record<symbol, unknown>) => {
      if (!token?.[OURS]) {
        inner?.recordSuccess?.(token);
      }
    },
  };
}

/** Limits a `BedrockRuntimeClient`'s model calls with llmctl and returns it. */
export function limit<T extends AwsClientLike>(awsClient: T, options: AwsLimitOptions): T {
  if (!awsClient?.middlewareStack?.addRelativeTo || !awsClient.config) {
    throw new TypeError("aws.limit takes a client of the AWS SDK for JavaScript v3 (new BedrockRuntimeClient({...}))");
  }
  if (!options?.client) {
    throw new TypeError("aws.limit needs an llmctl Client to ask: aws.limit(bedrock, { client: new Client() })");
  }
  const template = options.key ?? "bedrock/{model}";
  checkKeyTemplate(template.replaceAll("{region}", "region"));
  const maxRetries = options.maxRetries ?? 20;
  if (!Number.isInteger(maxRetries) || maxRetries < 0) {
    throw new TypeError(`maxRetries must be a whole number of retries (0 or more), not ${maxRetries}`);
  }
  const marked = awsClient as unknown as Record<symbol, unknown>;
  if (marked[LIMITED]) {
    return awsClient;
  }
  marked[LIMITED] = true;
  const config = awsClient.config;
  const region = async (): Promise<string> => {
    const r = config.region;
    const v = typeof r === "function" ? await (r as () => Promise<unknown>)() : r;
    return typeof v === "string" ? v : "";
  };
  const ownStrategy = config.retryStrategy as (() => Promise<Record<string, (...a: unknown[]) => unknown>>) | undefined;
  config.retryStrategy = async () => advisedStrategy(ownStrategy ? await ownStrategy() : undefined, maxRetries);

  const middleware =
    (next: (args: { request: { path?: string; body?: unknown } }) => Promise<{ response?: { statusCode?: number; headers?: Record<string, string> }; output?: Record<string, unknown> }>, context: Record<string, unknown>) =>
    async (args: { request: { path?: string; body?: unknown } }) => {
      const command = String(context.commandName ?? "");
      if (!LIMITED_COMMANDS.has(command)) {
        return next(args);
      }
      const call = pathCall(args.request.path ?? "");
      const raw = bodyText(args.request.body);
      const est = estimateRequest(raw);
      const model = call.model ?? est.model;
      const key = template.replaceAll("{model}", model || "unknown").replaceAll("{region}", (await region()) || "unknown");
      // One call's attempts: the SDK keeps the context per call.
      const state = ((context[MIDDLEWARE] as { attempt: number; first?: number } | undefined) ??= { attempt: 0 });
      state.attempt += 1;
      let lease: Lease;
      try {
        lease = await options.client.acquire(key, {
          inputTokens: est.inputTokens,
          outputTokens: est.outputTokens,
          outputTokensDeclared: est.outputDeclared,
          priority: options.priority,
          maxWait: options.maxWait,
          runId: options.runId,
          profile: options.profile,
          attempt: state.attempt,
          firstAttempt: state.first,
        });
      } catch (e) {
        throw e instanceof NotGranted ? throttled(e) : e;
      }
      state.first ??= Date.now();
      const advised = (advice: Advice) => options.onAdvice?.(key, advice);
      let result;
      try {
        result = await next(args);
      } catch (e) {
        const advice = await reportSafely(lease, failure(e), advised);
        // The retry strategy reads it: on "retry" the SDK waits the delay, then signs and sends
        // again, and the next attempt acquires anew.
        if (e && typeof e === "object") {
          (e as Record<symbol, unknown>)[ADVICE] = advice;
        }
        throw e;
      }
      const status = result.response?.statusCode ?? 200;
      const headers = result.response?.headers;
      const output = result.output ?? {};
      if (command === "ConverseStreamCommand" && output.stream) {
        output.stream = watched(output.stream as AsyncIterable<Record<string, unknown>>, lease, status, headers, true, advised);
      } else if (command === "InvokeModelWithResponseStreamCommand" && output.body) {
        output.body = watched(output.body as AsyncIterable<Record<string, unknown>>, lease, status, headers, false, advised);
      } else {
        const usage = command === "ConverseCommand" ? converseUsage(output) : headersUsage(headers);
        await reportSafely(lease, { status, headers, ...usageReport(usage) }, advised);
      }
      return result;
    };
  awsClient.middlewareStack.addRelativeTo(middleware, {
    name: MIDDLEWARE,
    relation: "before",
    toMiddleware: "httpSigningMiddleware",
    override: true,
  });
  return awsClient;
}
