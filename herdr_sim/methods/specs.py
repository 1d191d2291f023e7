"""Parameter shapes shared by several methods (Herdr's serde types)."""

from __future__ import annotations

from herdr_sim.wire.params import Bool, Enum, F, Float, Int, MapOf, Nullable, Obj, Str

OPT_STR = F(Nullable(Str()))
REQ_STR = F(Str(), required=True)
FOCUS = F(Bool(), default=False)
ENV = F(MapOf(Str()), default=dict)
SPLIT_DIRECTION = Enum(values=("right", "down"))
DIRECTION = Enum(values=("left", "right", "up", "down"))
READ_SOURCE = Enum(values=("visible", "recent", "recent_unwrapped", "detection"))
READ_FORMAT = Enum(values=("text", "ansi"))
AGENT_STATUS = Enum(values=("idle", "working", "blocked", "done", "unknown"))
OPT_U32 = F(Nullable(Int(32)))
OPT_U64 = F(Nullable(Int(64)))
OPT_FLOAT = F(Nullable(Float()))
OUTPUT_MATCH = F(
    Obj(
        fields={
            "type": F(Enum(values=("substring", "regex")), required=True),
            "value": F(Str(), required=True),
        }
    ),
    required=True,
)
EMPTY = Obj(fields={})
PANE_TARGET = Obj(fields={"pane_id": REQ_STR})
OPT_PANE_TARGET = Obj(fields={"pane_id": OPT_STR})
