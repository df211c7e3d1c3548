//! What the JavaScript side hands the tracer for each callback: plain data
//! read from ADK's objects (ids, names, numbers and JSON text).

use super::history::HistoryDelta;

/// One agent of the root agent's tree, as the JavaScript side flattened it.
#[derive(Clone, Debug, Default)]
pub struct AgentInfo {
    pub name: String,
    pub parent: Option<String>,
    pub description: Option<String>,
    /// `agent.model` when it is a string.
    pub model: Option<String>,
    /// Whether the agent runs its sub-agents one after another
    /// (SequentialAgent, LoopAgent): then a sibling becoming active means
    /// the previous one finished.
    pub sequential: bool,
    /// A LoopAgent: its span covers every pass over its sub-agents.
    pub looping: bool,
}

/// Per-invocation settings read when the run starts.
#[derive(Clone, Copy, Debug)]
pub struct RunSettings {
    pub capture: bool,
    pub vertex: bool,
    pub value_limit: Option<usize>,
    /// The run streams (`runConfig.streamingMode` SSE): a model call may
    /// answer in several non-partial responses (streamed.rs).
    pub streams: bool,
}

impl Default for RunSettings {
    fn default() -> Self {
        RunSettings {
            capture: true,
            vertex: false,
            value_limit: None,
            streams: false,
        }
    }
}

/// What the JavaScript side knows when a run starts.
#[derive(Clone, Debug, Default)]
pub struct RunStart {
    pub invocation_id: String,
    pub session_id: Option<String>,
    pub app_name: Option<String>,
    pub user_id: Option<String>,
    /// The root agent's name; `None` for a Workflow root.
    pub root_name: Option<String>,
    pub root_description: Option<String>,
    pub agents: Vec<AgentInfo>,
    /// JSON of the user's Content (captured runs only).
    pub user_content: Option<String>,
    pub settings: RunSettings,
    /// The span the run's root is a child of, from outside this tracer
    /// (the application's active OpenTelemetry span): its trace, its id,
    /// and whether that trace is sampled. `None`: a new trace.
    pub remote_parent: Option<RemoteParent>,
}

/// A parent span from outside this tracer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemoteParent {
    pub trace_id: [u8; 16],
    pub span_id: [u8; 8],
    /// Off: none of the run's spans is handed to the sink.
    pub sampled: bool,
    /// The parent's span context was propagated from another process
    /// (OpenTelemetry's `isRemote`), not a span of this one.
    pub is_remote: bool,
    /// The parent's W3C tracestate, carried by every span of the trace.
    pub trace_state: Option<std::sync::Arc<str>>,
}

/// A model request, as read on the JavaScript thread.
#[derive(Clone, Debug, Default)]
pub struct ModelRequest {
    pub model: Option<String>,
    /// JSON object of the generation config's number fields.
    pub config_json: Option<String>,
    /// JSON of `config.tools` when it declares functions (not gated by
    /// capture; converted lazily like the messages).
    pub tools_json: Option<String>,
    /// JSON of `config.systemInstruction` (captured runs only).
    pub system_json: Option<String>,
    /// JSON array of `llmRequest.contents` (captured runs only); with
    /// `history`, only the items after the conversation's kept prefix.
    pub contents_json: Option<String>,
    pub history: Option<HistoryDelta>,
}

#[derive(Clone, Debug, Default)]
pub struct ModelResponse {
    pub partial: bool,
    pub finish_reason: Option<String>,
    /// prompt, candidates, total, thoughts, cachedContent token counts.
    pub usage: [Option<i64>; 5],
    pub error_code: Option<String>,
    pub error_message: Option<String>,
    pub content_json: Option<String>,
    /// ADK sends an event for this response (it has parts, an error code,
    /// is interrupted, or reports usage alone): a streamed turn then waits
    /// for that event, which adds nothing (streamed.rs).
    pub yields_event: bool,
    /// The response had a `usageMetadata`, even one without counts.
    pub has_usage: bool,
    /// `interactionId` and `modelVersion`: `gen_ai.response.id` and `.model`.
    pub response_id: Option<String>,
    pub response_model: Option<String>,
}

/// A function response found in an event: call id, tool name, response JSON.
#[derive(Clone, Debug, Default)]
pub struct FunctionResponse {
    pub id: String,
    pub name: String,
    pub response_json: String,
}

#[derive(Clone, Debug, Default)]
pub struct EventInfo {
    pub author: Option<String>,
    pub partial: bool,
    pub error_code: Option<String>,
    pub error_message: Option<String>,
    pub content_json: Option<String>,
    pub function_responses: Vec<FunctionResponse>,
    /// The content is nothing but `function_responses` (role `user`): the
    /// JavaScript side did not stringify it a second time; it is rebuilt
    /// here from the responses when needed.
    pub responses_only: bool,
    /// The event's own response fields, for a model span it closes (one no
    /// afterModelCallback closed: a cached response).
    pub finish_reason: Option<String>,
    /// prompt, candidates, total, thoughts, cachedContent token counts.
    pub usage: [Option<i64>; 5],
    /// The event had a `usageMetadata`, even one without counts.
    pub has_usage: bool,
    /// Whether this is the author's answer that ends its run (ADK's final
    /// response: parts, none a function call or response): its run is then
    /// over, and its next model or tool call is a new run of it (a loop's
    /// next pass). `None`: the event says nothing of it (no parts).
    pub ends_run: Option<bool>,
}
