//! A settings struct's numbers checked against the ranges its JSON schema gives them
//! (`#[schemars(range(min, max))]` on the fields): the one place a range is written, shared by
//! the check, the schema hosts validate against and docs/settings.md.

use serde_json::Value;

/// A setting outside its range: the field (as the JSON names it) and what is wrong with it.
#[derive(Debug, Clone, PartialEq)]
pub struct OutOfRange {
    pub field: String,
    pub message: String,
}

/// The first field of `values` (a settings struct as JSON) outside the `minimum` / `maximum`
/// its property in `schema` gives, with an error naming `prefix` + the field; a number that is
/// not finite (serialised as null) is out of any range.
pub fn first_out_of_range(schema: &Value, values: &Value, prefix: &str) -> Option<OutOfRange> {
    let properties = schema.get("properties").and_then(Value::as_object)?;
    for (name, property) in properties {
        let (min, max) = (property.get("minimum"), property.get("maximum"));
        if min.is_none() && max.is_none() {
            continue;
        }
        let value = match values.get(name) {
            // An optional setting left out is in range.
            None | Some(Value::Null) if property_allows_null(property) => continue,
            Some(v) => v.as_f64(),
            None => None,
        };
        let Some(value) = value else {
            return Some(OutOfRange {
                field: name.clone(),
                message: format!("{prefix}{name} must be a finite number"),
            });
        };
        let below = min.and_then(Value::as_f64).is_some_and(|m| value < m);
        let above = max.and_then(Value::as_f64).is_some_and(|m| value > m);
        if below || above {
            let bound = |b: Option<&Value>| b.map_or_else(|| "…".to_string(), ToString::to_string);
            let message = format!("{prefix}{name} must be between {} and {}, not {value}", bound(min), bound(max));
            return Some(OutOfRange { field: name.clone(), message });
        }
    }
    None
}

/// [`first_out_of_range`]'s message alone.
pub fn out_of_range(schema: &Value, values: &Value, prefix: &str) -> Option<String> {
    first_out_of_range(schema, values, prefix).map(|o| o.message)
}

/// Whether a property's type admits null (an `Option` field).
fn property_allows_null(property: &Value) -> bool {
    match property.get("type") {
        Some(Value::Array(types)) => types.iter().any(|t| t == "null"),
        Some(t) => t == "null",
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_number_outside_its_range_is_named_with_its_bounds() {
        let schema = json!({"properties": {
            "share": {"type": "number", "minimum": 0.0, "maximum": 0.9},
            "count": {"type": "integer", "minimum": 1},
            "cap": {"type": ["integer", "null"], "minimum": 1},
            "name": {"type": "string"}
        }});
        assert_eq!(out_of_range(&schema, &json!({"share": 0.5, "count": 3, "cap": null, "name": "x"}), "c."), None);
        assert_eq!(
            out_of_range(&schema, &json!({"share": 0.95, "count": 3}), "c.").as_deref(),
            Some("c.share must be between 0.0 and 0.9, not 0.95")
        );
        assert_eq!(
            out_of_range(&schema, &json!({"share": 0.5, "count": 0}), "").as_deref(),
            Some("count must be between 1 and …, not 0")
        );
        assert_eq!(
            out_of_range(&schema, &json!({"share": null, "count": 1}), "").as_deref(),
            Some("share must be a finite number")
        );
        assert_eq!(
            out_of_range(&schema, &json!({"share": 0.1, "count": 1, "cap": 0}), "").as_deref(),
            Some("cap must be between 1 and …, not 0")
        );
    }
}
