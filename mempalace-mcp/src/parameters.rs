//! `Parameters<T>`: a tool's arguments, parsed strictly. Arguments that do not fit the tool's
//! schema (a misspelt name, a wrong type, a missing required one) are refused with the
//! protocol's invalid-params error (-32602) naming the argument, before the tool runs, so a
//! misspelt filter never silently widens a search.

use rmcp::handler::server::common::FromContextPart;
use rmcp::handler::server::tool::ToolCallContext;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;

/// A tool's parsed arguments (absent arguments count as `{}`).
#[derive(Debug, Clone)]
pub struct Parameters<T>(pub T);

impl<T: JsonSchema> JsonSchema for Parameters<T> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        T::schema_name()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        T::json_schema(generator)
    }
}

/// Parses `arguments` as `T`, or the message of the invalid-params error that refuses them.
pub fn parse_arguments<T: DeserializeOwned>(
    tool: &str,
    arguments: Option<serde_json::Map<String, serde_json::Value>>,
) -> Result<T, String> {
    serde_json::from_value(serde_json::Value::Object(arguments.unwrap_or_default()))
        .map_err(|e| format!("Invalid arguments for {tool}: {e}"))
}

impl<S, T: DeserializeOwned> FromContextPart<ToolCallContext<'_, S>> for Parameters<T> {
    fn from_context_part(context: &mut ToolCallContext<S>) -> Result<Self, rmcp::ErrorData> {
        let arguments = context.arguments.take();
        parse_arguments(context.name(), arguments)
            .map(Parameters)
            .map_err(|message| rmcp::ErrorData::invalid_params(message, None))
    }
}

/// No arguments.
#[derive(Debug, Clone, Default, PartialEq, serde::Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}
