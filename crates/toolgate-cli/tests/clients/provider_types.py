"""Checks toolgate's exports against the providers' own published request types, offline.

Usage: provider_types.py FORMAT FILE [--strict]

FILE is the output of `toolgate export --format FORMAT`. Each tool is validated with the
provider's Python SDK types, refusing keys the type does not declare:

- openai: `openai.types.chat.ChatCompletionFunctionToolParam` (Chat Completions);
- openai-responses: `openai.types.responses.FunctionToolParam`;
- anthropic: `anthropic.types.ToolParam`;
- gemini: `google.genai.types.Tool` (a pydantic model that forbids unknown fields, with
  Gemini's `Schema` and its `Type` enum).

With --strict, every tool sent with "strict": true must be left unchanged by the OpenAI
SDK's own strict-mode pass (`openai.lib._pydantic._ensure_strict_json_schema`, which adds
what strict mode requires: additionalProperties false, every property required, ...), and
hold no keyword strict mode does not support. Prints one line per format and exits 1 on
the first refusal, naming the tool and what was wrong.
"""

import copy
import json
import sys

from pydantic import ConfigDict, TypeAdapter, with_config

# Keywords OpenAI's strict mode supports ("Supported schemas" of Structured Outputs).
STRICT_KEYWORDS = {
    "type", "properties", "required", "additionalProperties", "items", "enum", "const",
    "anyOf", "$ref", "$defs", "description", "title", "pattern", "format", "minimum",
    "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minItems", "maxItems",
}


def forbid_extra(typed_dict):
    """The TypedDict with pydantic refusing keys it does not declare, at every level."""
    return TypeAdapter(with_config(ConfigDict(extra="forbid"))(typed_dict))


def fail(tool, message):
    print(f"refused: {tool}: {message}")
    sys.exit(1)


def check_strict_keywords(name, schema, path="#"):
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key in ("properties", "$defs"):
                for sub_name, sub in value.items():
                    check_strict_keywords(name, sub, f"{path}/{key}/{sub_name}")
                continue
            if key not in STRICT_KEYWORDS:
                fail(name, f"{path}/{key} is not a strict-mode keyword")
            if key == "items":
                check_strict_keywords(name, value, f"{path}/items")
            if key == "anyOf":
                for i, sub in enumerate(value):
                    check_strict_keywords(name, sub, f"{path}/anyOf/{i}")


def strict_unchanged(name, parameters):
    from openai.lib._pydantic import _ensure_strict_json_schema

    again = copy.deepcopy(parameters)
    again = _ensure_strict_json_schema(again, path=(), root=again)
    if again != parameters:
        fail(name, "the OpenAI SDK's strict pass changes the schema: it was not strict")
    check_strict_keywords(name, parameters)


def main():
    fmt, path = sys.argv[1], sys.argv[2]
    strict = "--strict" in sys.argv[3:]
    with open(path, encoding="utf-8") as f:
        exported = json.load(f)
    checked = strict_count = 0
    if fmt == "openai":
        from openai.types.chat import ChatCompletionFunctionToolParam

        adapter = TypeAdapter(ChatCompletionFunctionToolParam)
        from openai.types.shared_params import FunctionDefinition

        function = forbid_extra(FunctionDefinition)
        for tool in exported:
            name = tool["function"]["name"]
            try:
                adapter.validate_python(tool)
                function.validate_python(tool["function"])
            except Exception as e:  # noqa: BLE001 - the message names what was refused
                fail(name, e)
            if strict and tool["function"].get("strict"):
                strict_unchanged(name, tool["function"]["parameters"])
                strict_count += 1
            checked += 1
    elif fmt == "openai-responses":
        from openai.types.responses import FunctionToolParam

        adapter = forbid_extra(FunctionToolParam)
        for tool in exported:
            try:
                adapter.validate_python(tool)
            except Exception as e:  # noqa: BLE001
                fail(tool["name"], e)
            if strict and tool.get("strict"):
                strict_unchanged(tool["name"], tool["parameters"])
                strict_count += 1
            checked += 1
    elif fmt == "anthropic":
        from anthropic.types import ToolParam

        adapter = forbid_extra(ToolParam)
        for tool in exported:
            try:
                adapter.validate_python(tool)
            except Exception as e:  # noqa: BLE001
                fail(tool["name"], e)
            checked += 1
    elif fmt == "gemini":
        from google.genai import types

        # the SDK's enums take unknown values with a warning (for newer servers): check
        # each type against the members this version knows
        known = set(types.Type.__members__) - {"TYPE_UNSPECIFIED"}

        def types_known(name, schema):
            if schema is None:
                return
            if schema.type is not None and schema.type.name not in known:
                fail(name, f"type {schema.type} is not one of Gemini's {sorted(known)}")
            for sub in (schema.properties or {}).values():
                types_known(name, sub)
            for sub in schema.any_of or []:
                types_known(name, sub)
            types_known(name, schema.items)

        for tool in exported:
            try:
                parsed = types.Tool.model_validate(tool)
            except Exception as e:  # noqa: BLE001
                fail("functionDeclarations", e)
            for declaration in parsed.function_declarations or []:
                types_known(declaration.name, declaration.parameters)
                checked += 1
    else:
        fail(fmt, "unknown format")
    print(f"{fmt}: {checked} tools accepted, {strict_count} strict")


if __name__ == "__main__":
    main()
