"""The Kiro dialects' vocabulary: what kiro-cli and the Kiro IDE call each name the model uses.

Kept beside the dialect modules that read these fields (:mod:`.dialect_cli`, :mod:`.dialect_db`,
:mod:`.dialect_ide`), whose docstrings give the full rules: a rename in Kiro changes this table
and the reading together. The metadata dialects (``kiro-cli-meta/1``, ``kiro-ide-meta/1``) land a
document whole and read no name of the model, so they have no glossary.
"""

from __future__ import annotations

from asz_core.glossary import Glossary, Term

__all__ = ["GLOSSARIES"]

_CLI_LINE = "a line of sessions/cli/<uuid>.jsonl"
_DB_TURN = "a turn of a conversations_v2 row (history[i])"
_IDE_LINE = "a line of sess_<uuid>/messages.jsonl"

_CLI = Glossary(dialect="kiro-cli/1", runtime="Kiro", terms=(
    Term("session", "<uuid>", "the event log's file name"),
    Term("stream", "parent_session_id", "the session's <uuid>.json",
         "a session whose metadata names a parent lands as a stream of it"),
    Term("id", "data.message_id", "a Prompt or AssistantMessage line"),
    Term("call", "data.message_id", "an AssistantMessage line", "one AssistantMessage is one model response"),
    Term("llm.call", "AssistantMessage", _CLI_LINE + ", kind AssistantMessage"),
    Term("run", "", "", "derived: the message_id of the Prompt that started the loop, carried by the "
                        "lines after it until a Prompt, a Clear or a line not read; kiro-cli names no loop"),
    Term("time", "data.meta.timestamp", "a Prompt line", "epoch seconds; an AssistantMessage has none"),
    Term("external", "Prompt", _CLI_LINE + ", kind Prompt"),
    Term("message.assistant", "text", "an AssistantMessage's content"),
    Term("thinking", "thinking", "an AssistantMessage's content", "its signature is dropped, not carried"),
    Term("model", "modelId", "an AssistantMessage line"),
    Term("tool", "toolUse + toolResult", "an AssistantMessage and a ToolResults line"),
    Term("result_of", "toolUseId", "a toolResult in a ToolResults line"),
    Term("epoch.boundary", "Clear or Compaction", _CLI_LINE + ", kind Clear or Compaction",
         "Clear empties the context; Compaction replaces it by its summary"),
    Term("epoch.summary", "Compaction", _CLI_LINE + ", kind Compaction"),
))

_DB = Glossary(dialect="kiro-cli-db/1", runtime="Kiro", terms=(
    Term("session", "key", "a conversations_v2 row", "the conversation's key"),
    Term("id", "message_id", "the reply of " + _DB_TURN),
    Term("call", "request_metadata.request_id", _DB_TURN),
    Term("llm.call", "request_metadata.request_id", _DB_TURN,
         "one turn is one request to the model; only a turn that holds no person's words is the "
         "model's alone (from: agent), so only those assemble as a call"),
    Term("run", "", "", "derived: the request_id of the Prompt turn that started the loop, carried by the "
                        "ToolUseResults turns after it; the database names no loop"),
    Term("model", "request_metadata.model_id", _DB_TURN),
    Term("time", "request_metadata.request_start_timestamp_ms", _DB_TURN,
         "else the user message's timestamp"),
    Term("external", "user.content.Prompt", _DB_TURN),
    Term("context.injection", "user.additional_context", _DB_TURN),
    Term("tool", "ToolUse.tool_uses + ToolUseResults", "the assistant and the next turn's user"),
    Term("result_of", "tool_use_id", "a ToolUseResults item"),
))

_IDE = Glossary(dialect="kiro-ide/1", runtime="Kiro", terms=(
    Term("session", "sess_<uuid>", "the session's directory name"),
    Term("stream", "subSessionId", "a sub_agent_start payload", "the child session lands as a stream"),
    Term("child", "subSessionId", "a sub_agent_start payload"),
    Term("id", "id", _IDE_LINE),
    Term("time", "timestamp", _IDE_LINE),
    Term("run", "executionId", "a payload",
         "the execution a turn's records share; not where it equals the line's toolCallId (an approval)"),
    Term("call", "", "", "derived: the id of the first of the model's lines (assistant, tool_call) with no "
                         "input between them; the IDE names no model call"),
    Term("llm.call", "", "", "derived, as call: the model's lines between two inputs to the model"),
    Term("external", "user", _IDE_LINE + ", payload.type user"),
    Term("message.assistant", "Say, Print or Summary", "an assistant payload's operationType"),
    Term("thinking", "Reasoning", "an assistant payload's operationType",
         'the body is "..." beside a reasoningSignature: the text is not kept'),
    Term("model", "reasoningModelId", "an assistant payload"),
    Term("tool", "tool_call + tool_result", "two lines"),
    Term("result_of", "toolCallId", "a tool_result payload"),
    Term("context.injection", "session_start", "a payload", "the system prompt"),
    Term("epoch.boundary", "tombstone", "a payload", "where the compacted messages were"),
))

GLOSSARIES = (_CLI, _DB, _IDE)
