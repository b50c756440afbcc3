package dev.cairn;

import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * Options of {@link CairnObject#loadWeights(String, WeightsOptions)} and {@link
 * CairnObject#saveWeights(String, WeightsFormat, WeightsOptions)} (cairn_weights_options); a field
 * not set keeps cairn_weights_options_init's default. Not thread-safe to mutate.
 *
 * <p>A variable's name is its path from the object ({@link CairnObject#walk()}'s: edge names
 * joined by '/', "layer-0/kernel"), with every '/' replaced by {@link #separator} and {@link
 * #prefix} put in front. On load a Cairn or TensorFlow key's "/.ATTRIBUTES/VARIABLE_VALUE" is
 * dropped first, so the keys of a checkpoint of {"model": module} match with prefix "model/". Keys
 * outside the prefix, optimizer slots and the object graph are passed over.
 *
 * <pre>{@code
 * WeightsOptions torchStyle = new WeightsOptions().prefix("model.").separator(".")
 *     .metadata(Map.of("format", "pt"));
 * }</pre>
 */
public final class WeightsOptions {
  private long set; // CairnNative.WEIGHTS_OPTIONS_* of the fields set
  private String prefix;
  private String separator;
  private boolean allowMissing;
  private boolean allowUnused;
  private boolean checksums = true;
  private long maxShardBytes;
  private Map<String, String> metadata; // sorted copy; null: none

  /** Options at their defaults: no prefix, "/" between path parts, strict load, checksums on. */
  public WeightsOptions() {}

  /**
   * What names start with before the path ("model/", "encoder."); default "" (null: the default).
   *
   * @param prefix the prefix
   * @return these options
   */
  public WeightsOptions prefix(String prefix) {
    this.prefix = prefix;
    set |= CairnNative.WEIGHTS_OPTIONS_PREFIX;
    return this;
  }

  /**
   * What joins path parts in names; default "/" (null: the default); "." for PyTorch-style names.
   *
   * @param separator the separator
   * @return these options
   */
  public WeightsOptions separator(String separator) {
    this.separator = separator;
    set |= CairnNative.WEIGHTS_OPTIONS_SEPARATOR;
    return this;
  }

  /**
   * Load: variables the file lacks keep their values; default false (NOT_FOUND naming them).
   *
   * @param allowMissing whether a variable may be missing from the file
   * @return these options
   */
  public WeightsOptions allowMissing(boolean allowMissing) {
    this.allowMissing = allowMissing;
    set |= CairnNative.WEIGHTS_OPTIONS_ALLOW_MISSING;
    return this;
  }

  /**
   * Load: values under the prefix that match no variable are skipped; default false
   * (INVALID_ARGUMENT naming them).
   *
   * @param allowUnused whether the file may hold values no variable takes
   * @return these options
   */
  public WeightsOptions allowUnused(boolean allowUnused) {
    this.allowUnused = allowUnused;
    set |= CairnNative.WEIGHTS_OPTIONS_ALLOW_UNUSED;
    return this;
  }

  /**
   * Save, safetensors: store each tensor's XXH3 in "__metadata__" ("cairn.checksum.&lt;name&gt;"),
   * checked by every Cairn load; default true.
   *
   * @param checksums whether to store checksums
   * @return these options
   */
  public WeightsOptions checksums(boolean checksums) {
    this.checksums = checksums;
    set |= CairnNative.WEIGHTS_OPTIONS_CHECKSUMS;
    return this;
  }

  /**
   * Save, safetensors: 0 (default) writes one file at the path; otherwise the path is a directory
   * that gets shards of at most this many bytes (one bigger tensor gets a shard of its own) and
   * model.safetensors.index.json, as Hugging Face's tools write them.
   *
   * @param bytes the most bytes of one shard (0: one file)
   * @return these options
   */
  public WeightsOptions maxShardBytes(long bytes) {
    if (bytes < 0) throw new IllegalArgumentException("maxShardBytes must be >= 0, got " + bytes);
    this.maxShardBytes = bytes;
    set |= CairnNative.WEIGHTS_OPTIONS_MAX_SHARD_BYTES;
    return this;
  }

  /**
   * Save, safetensors: strings added to "__metadata__" (e.g. {"format": "pt"}); default none
   * (null: none). The map is copied.
   *
   * @param metadata the keys and values
   * @return these options
   */
  public WeightsOptions metadata(Map<String, String> metadata) {
    if (metadata == null) {
      this.metadata = null;
    } else {
      TreeMap<String, String> copy = new TreeMap<>();
      for (Map.Entry<String, String> e : metadata.entrySet()) {
        copy.put(Objects.requireNonNull(e.getKey(), "metadata key"),
            Objects.requireNonNull(e.getValue(), "metadata value of " + e.getKey()));
      }
      this.metadata = copy;
    }
    set |= CairnNative.WEIGHTS_OPTIONS_METADATA_JSON;
    return this;
  }

  /**
   * The setting of {@link #prefix}.
   *
   * @return the prefix (null: "")
   */
  public String prefix() {
    return prefix;
  }

  /**
   * The setting of {@link #separator}.
   *
   * @return the separator (null: "/")
   */
  public String separator() {
    return separator;
  }

  /**
   * The setting of {@link #allowMissing(boolean)}.
   *
   * @return whether a variable may be missing from the file
   */
  public boolean allowMissing() {
    return allowMissing;
  }

  /**
   * The setting of {@link #allowUnused(boolean)}.
   *
   * @return whether the file may hold values no variable takes
   */
  public boolean allowUnused() {
    return allowUnused;
  }

  /**
   * The setting of {@link #checksums(boolean)}.
   *
   * @return whether a safetensors save stores checksums
   */
  public boolean checksums() {
    return checksums;
  }

  /**
   * The setting of {@link #maxShardBytes(long)}.
   *
   * @return the most bytes of one shard (0: one file)
   */
  public long maxShardBytes() {
    return maxShardBytes;
  }

  /**
   * The setting of {@link #metadata(Map)}, sorted by key.
   *
   * @return the metadata (null: none)
   */
  public Map<String, String> metadata() {
    return metadata == null ? null : Collections.unmodifiableMap(metadata);
  }

  /**
   * The metadata as the JSON object of strings cairn_weights_options.metadata_json takes.
   *
   * @return the JSON text (null: none)
   */
  String metadataJson() {
    if (metadata == null) return null;
    StringBuilder out = new StringBuilder("{");
    for (Map.Entry<String, String> e : metadata.entrySet()) {
      if (out.length() > 1) out.append(',');
      quote(out, e.getKey());
      out.append(':');
      quote(out, e.getValue());
    }
    return out.append('}').toString();
  }

  // A JSON string (RFC 8259): quote, backslash and control characters escaped, the rest as is.
  private static void quote(StringBuilder out, String s) {
    out.append('"');
    for (int i = 0; i < s.length(); ++i) {
      char c = s.charAt(i);
      switch (c) {
        case '"': out.append("\\\""); break;
        case '\\': out.append("\\\\"); break;
        case '\n': out.append("\\n"); break;
        case '\r': out.append("\\r"); break;
        case '\t': out.append("\\t"); break;
        case '\b': out.append("\\b"); break;
        case '\f': out.append("\\f"); break;
        default:
          if (c < 0x20) {
            out.append(String.format("\\u%04x", (int) c));
          } else {
            out.append(c);
          }
      }
    }
    out.append('"');
  }

  // The fields as the raw layer takes them (CairnNative.objectLoadWeights / objectSaveWeights).
  long set() {
    return set;
  }

  byte[] prefixBytes() {
    return NativeResources.cstr(prefix);
  }

  byte[] separatorBytes() {
    return NativeResources.cstr(separator);
  }

  byte[] metadataJsonBytes() {
    return NativeResources.cstr(metadataJson());
  }
}
