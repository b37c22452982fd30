"""``claude-code/1``'s vocabulary: what Claude Code calls each name the model uses, and where.

Kept beside the dialect that reads these fields (:mod:`.dialect`, :mod:`.links`, :mod:`.flags`):
a rename in Claude Code changes this table and the reading together. A row whose note says
"not read" names where Claude Code records the thing although this adapter lands nothing from it.
"""

from __future__ import annotations

from asz_adapters.claude_code_local.about import DIALECT
from asz_core.glossary import Glossary, Term

__all__ = ["GLOSSARY"]

_ASSISTANT = "an assistant record"
_SYSTEM = "a system record"
_RESULT = "a tool result"
_RECORD = "every record"

GLOSSARY = Glossary(dialect=DIALECT, runtime="Claude Code", terms=(
    Term("agent.call", "Agent, Skill or Workflow tool_use", _ASSISTANT),
    Term("agent.launch_ack", 'toolUseResult.status == "async_launched"', _RESULT,
         "it acknowledges a launch; the child's result comes later"),
    Term("batch", "toolUseResult.runId", "a workflow launch result",
         "the batch's records are filed under a directory of the same name"),
    Term("call", "message.id", _RECORD, "requestId is not used: a record the client made up can repeat one"),
    Term("cancels", "toolUseResult.interrupted", _RESULT, "not read: no cancels relation is written"),
    Term("child", "toolUseResult.agentId", "a launch result, a journal record"),
    Term("context.injection", "attachment", "an attachment record"),
    Term("continues", "logicalParentUuid", "a compact_boundary record",
         "the boundary's own parentUuid is null, so this is its only link back"),
    Term("control.command", "system/local_command", _SYSTEM),
    Term("control.interrupt", "toolUseResult.interrupted", _RESULT, "not read: no such step is emitted"),
    Term("control.notice", "system/away_summary, bridge_status, informational, model_refusal_fallback",
         _SYSTEM, "and every system subtype no other row names"),
    Term("control.permission", "permission-mode", "a record type", "not read: no such step is emitted"),
    Term("epoch.boundary", "system/compact_boundary", _SYSTEM),
    Term("epoch.summary", "isCompactSummary", "a user record"),
    Term("error.api", "system/api_error", _SYSTEM),
    Term("external", 'origin.kind == "human"', _RECORD,
         "a run none of whose records states an origin (a command typed locally) too"),
    Term("follows", "logicalParentUuid", "a compact_boundary record"),
    Term("id", "uuid", _RECORD),
    Term("llm.call", "message.id", "the assistant records sharing one", "one call spans several records"),
    Term("message.assistant", "text block", _ASSISTANT),
    Term("message.external", 'origin.kind == "human"', "a user record",
         'and a queued_command attachment whose commandMode is "prompt"'),
    Term("message.synthetic", 'message.model == "<synthetic>"', _ASSISTANT,
         "written by the client, not produced by a model"),
    Term("model", "message.model", _ASSISTANT, "<synthetic> on a record the client made up"),
    Term("notification", 'origin.kind == "task-notification"', _RECORD),
    Term("parent", "parentUuid", _RECORD),
    Term("redacted", "redacted_thinking", "a content block"),
    Term("reports", "<task-notification>", "a user record's content"),
    Term("result_of", "tool_use_id", "a tool_result block", "sourceToolAssistantUUID says it again"),
    Term("run", "promptId", _RECORD,
         "one per distinct promptId in a stream; a model response has none and reaches one through its parents"),
    Term("runtime.notification", "<task-notification>", "a user record's content"),
    Term("session", "sessionId", "every record, and the transcript's file name"),
    Term("starts", "toolUseResult.agentId, or a run journal", "a launch result"),
    Term("stream", "agentId", "a child transcript's file name, agent-<id>.jsonl",
         "the session transcript itself is the parent lineage"),
    Term("summarizes", "parentUuid", "an isCompactSummary record"),
    Term("thinking", "thinking block", _ASSISTANT),
    Term("time", "timestamp", _RECORD),
    Term("tool", "tool_use + tool_result", "two records", "one step here, two blocks there"),
    Term("trigger", "origin.kind", "every record, and attachment.origin.kind"),
    Term("turn.duration", "system/turn_duration", _SYSTEM,
         "measured by the runtime, not the gap between two timestamps"),
))
