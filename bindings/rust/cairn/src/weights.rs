//! Weights by name, like Keras' `load_weights` / `save_weights`: [`Object::load_weights`] and
//! [`Object::save_weights`] over the three formats of [`WeightsFormat`] (Cairn checkpoint files,
//! TensorFlow checkpoints, safetensors), with [`WeightsOptions`].
//!
//! A variable's name is its path from the object (what [`Object::walk`] gives: edge names joined
//! by '/', "layer-0/kernel"), with every '/' replaced by the separator and the prefix put in
//! front. On load a Cairn or TensorFlow key's "/.ATTRIBUTES/VARIABLE_VALUE" is dropped first, so
//! the keys of a checkpoint of `[("model", &module)]` match with prefix "model/". Keys outside the
//! prefix, optimizer slots and the object graph are not weights of the object and are passed over.

use std::collections::BTreeMap;
use std::ffi::CString;
use std::fmt::Write as _;
use std::path::Path;

use cairn_sys as sys;

use crate::checkpoint::c_path;
use crate::error::{c_string, check};
use crate::options::{init, set_fields};
use crate::{Object, Result, WeightsFormat};

/// Options of [`Object::load_weights`] and [`Object::save_weights`]; options not set keep cairn.h's
/// defaults (`cairn_weights_options_init`): no prefix, separator "/", every variable and every
/// value must match, checksums stored, one file, no extra metadata.
///
/// ```
/// use cairn::WeightsOptions;
/// // PyTorch-style names under "encoder.": "encoder.layer-0.kernel", ...
/// let options = WeightsOptions::new().prefix("encoder.").separator(".").metadata("format", "pt");
/// # let _ = options;
/// ```
#[derive(Clone, Debug, Default)]
pub struct WeightsOptions {
    prefix: Option<String>,
    separator: Option<String>,
    allow_missing: Option<bool>,
    allow_unused: Option<bool>,
    checksums: Option<bool>,
    max_shard_bytes: Option<u64>,
    metadata: BTreeMap<String, String>,
}

impl WeightsOptions {
    /// cairn.h's defaults (see the type's documentation).
    pub fn new() -> Self {
        Self::default()
    }

    /// What names start with before the path ("model/", "encoder."); default "".
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = Some(prefix.into());
        self
    }

    /// What joins path parts in names; default "/", "." for PyTorch-style names.
    pub fn separator(mut self, separator: impl Into<String>) -> Self {
        self.separator = Some(separator.into());
        self
    }

    /// Load: variables the file lacks keep their values; default false (NOT_FOUND naming them).
    pub fn allow_missing(mut self, on: bool) -> Self {
        self.allow_missing = Some(on);
        self
    }

    /// Load: values under the prefix that match no variable are skipped; default false
    /// (INVALID_ARGUMENT naming them).
    pub fn allow_unused(mut self, on: bool) -> Self {
        self.allow_unused = Some(on);
        self
    }

    /// Save, safetensors: store each tensor's XXH3 in `"__metadata__"`
    /// (`"cairn.checksum.<name>"`), checked by every Cairn load; default true.
    pub fn checksums(mut self, on: bool) -> Self {
        self.checksums = Some(on);
        self
    }

    /// Save, safetensors: 0 (default) writes one file at the path; otherwise the path is a
    /// directory that gets shards of at most this many bytes (one bigger tensor gets a shard of
    /// its own) and `model.safetensors.index.json`, as Hugging Face's tools write them.
    pub fn max_shard_bytes(mut self, bytes: u64) -> Self {
        self.max_shard_bytes = Some(bytes);
        self
    }

    /// Save, safetensors: adds `key: value` to `"__metadata__"` (e.g. `("format", "pt")`); a key
    /// given twice keeps the last value. Keys and values are any text without NUL bytes (the
    /// binding writes them as JSON, escaping what needs it).
    pub fn metadata(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.metadata.insert(key.into(), value.into());
        self
    }

    /// Save, safetensors: adds every pair to `"__metadata__"`, as [`WeightsOptions::metadata`].
    pub fn metadata_entries<K, V>(mut self, entries: impl IntoIterator<Item = (K, V)>) -> Self
    where
        K: Into<String>,
        V: Into<String>,
    {
        self.metadata.extend(entries.into_iter().map(|(k, v)| (k.into(), v.into())));
        self
    }

    /// Runs `call` with the C struct, whose strings live for the call.
    fn with_raw<T>(&self, function: &str, call: impl FnOnce(&sys::cairn_weights_options) -> Result<T>) -> Result<T> {
        let text = |s: &Option<String>, what| s.as_deref().map(|s| c_string(s, function, what)).transpose();
        let (prefix, separator) = (text(&self.prefix, "prefix")?, text(&self.separator, "separator")?);
        // The reader hands metadata back as C strings, so NUL bytes are refused here as in every
        // other string (JSON itself could carry them as \u0000).
        for (key, value) in &self.metadata {
            c_string(key, function, "metadata key")?;
            c_string(value, function, "metadata value")?;
        }
        let metadata: Option<CString> = if self.metadata.is_empty() {
            None
        } else {
            Some(c_string(&metadata_json(&self.metadata), function, "metadata")?)
        };
        let mut raw = init(sys::cairn_weights_options_init)?;
        if let Some(p) = &prefix {
            raw.prefix = p.as_ptr();
        }
        if let Some(s) = &separator {
            raw.separator = s.as_ptr();
        }
        set_fields!(raw, self, { allow_missing, allow_unused, checksums, max_shard_bytes });
        if let Some(json) = &metadata {
            raw.metadata_json = json.as_ptr();
        }
        call(&raw)
    }
}

/// The metadata as a JSON object of strings (what `metadata_json` takes).
fn metadata_json(metadata: &BTreeMap<String, String>) -> String {
    let mut json = String::from("{");
    for (i, (key, value)) in metadata.iter().enumerate() {
        if i > 0 {
            json.push(',');
        }
        json_string(&mut json, key);
        json.push(':');
        json_string(&mut json, value);
    }
    json.push('}');
    json
}

/// Appends `s` as a JSON string: quotes, backslashes and control characters escaped, the rest as
/// UTF-8.
fn json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

impl Object {
    /// Loads the variables under this object (a module, layer, model or any object) by name from
    /// `path`, in any of the three formats of [`WeightsFormat`] (Keras' `load_weights` by name);
    /// returns how many variables were assigned. Every value is read and checked (dtype, shape,
    /// checksum) before any variable changes, so a failed load leaves every variable as it was.
    /// Values are copied to each variable's device.
    ///
    /// Errors: NOT_FOUND for a missing file or (without `allow_missing`) the variables the file
    /// lacks, INVALID_ARGUMENT naming the variable and key for a dtype or shape mismatch and
    /// (without `allow_unused`) the values no variable took, DATA_LOSS for a damaged file.
    pub fn load_weights(&self, path: impl AsRef<Path>, options: WeightsOptions) -> Result<usize> {
        let f = "Object::load_weights";
        let path = c_path(path.as_ref(), f, "path")?;
        options.with_raw(f, |raw| {
            let mut loaded = 0;
            // SAFETY: a live object; the path, options and their strings outlive the call.
            unsafe { check(sys::cairn_object_load_weights(self.as_raw(), path.as_ptr(), raw, &mut loaded))? };
            Ok(loaded)
        })
    }

    /// Saves the variables under this object by name to `path` in `format` (Keras'
    /// `save_weights`), atomically: a failed save leaves an earlier file at `path` as it was.
    /// - [`WeightsFormat::Safetensors`]: a file the safetensors package reads, or shards
    ///   ([`WeightsOptions::max_shard_bytes`]);
    /// - [`WeightsFormat::Tf`]: a name-based bundle `"<path>.index"` +
    ///   `"<path>.data-00000-of-00001"` (`tf.train.load_checkpoint` and TF1's Saver read it);
    /// - [`WeightsFormat::Cairn`]: a Cairn file of the names, without an object graph.
    ///
    /// [`Object::load_weights`] reads each back. For a checkpoint TensorFlow restores by object
    /// graph, use [`crate::Checkpoint::export`].
    ///
    /// Errors: INVALID_ARGUMENT for [`WeightsFormat::Auto`], an object without variables or two
    /// variables whose names collide; the errors of writing (naming the path).
    pub fn save_weights(&self, path: impl AsRef<Path>, format: WeightsFormat, options: WeightsOptions) -> Result<()> {
        let f = "Object::save_weights";
        let path = c_path(path.as_ref(), f, "path")?;
        options.with_raw(f, |raw| {
            // SAFETY: a live object; the path, options and their strings outlive the call.
            unsafe { check(sys::cairn_object_save_weights(self.as_raw(), path.as_ptr(), format.to_raw(), raw)) }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_is_a_json_object_of_escaped_strings() {
        let mut m = BTreeMap::new();
        assert_eq!(metadata_json(&m), "{}");
        m.insert("format".to_string(), "pt".to_string());
        m.insert("a \"q\"\\".to_string(), "line\nnext\ttab\u{1}é漢".to_string());
        assert_eq!(metadata_json(&m), r#"{"a \"q\"\\":"line\nnext\ttab\u0001é漢","format":"pt"}"#);
    }
}
