package dev.cairn;

import java.lang.ref.Reference;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * A tf.train.Example or tf.train.SequenceExample being built or read (cairn_example). Set features
 * with {@code set(key, values)}, append steps of a SequenceExample's feature lists with {@code
 * appendStep}, {@link #serialize()} to the deterministic protobuf bytes, {@link #parse} them back
 * and read features with {@link #int64s}, {@link #floats} and {@link #bytes}. Batches of serialized
 * records parse straight into tensors with {@link FeatureSpec#parse} (tf.io.parse_example).
 *
 * <pre>{@code
 * try (Example ex = Example.create()) {
 *   ex.set("label", 7L).set("pixels", 0.5f, 0.25f).set("name", "seven".getBytes(UTF_8));
 *   byte[] record = ex.serialize();
 * }
 * }</pre>
 *
 * <p>Reading may happen from several threads at once; writes need the example to themselves.
 */
public final class Example extends NativeHandle {
  /** The {@code step} that addresses a feature (a context feature) rather than a feature list's step. */
  public static final long NO_STEP = -1;

  private Example(long handle) {
    super(handle, CairnNative::exampleFree);
  }

  /**
   * An empty tf.train.Example.
   *
   * @return the example
   */
  public static Example create() {
    return create(ExampleKind.EXAMPLE);
  }

  /**
   * An empty tf.train.SequenceExample.
   *
   * @return the sequence example
   */
  public static Example createSequence() {
    return create(ExampleKind.SEQUENCE_EXAMPLE);
  }

  /**
   * An empty message of {@code kind}.
   *
   * @param kind EXAMPLE or SEQUENCE_EXAMPLE
   * @return the example
   */
  public static Example create(ExampleKind kind) {
    Objects.requireNonNull(kind, "kind");
    NativeLibrary.check();
    return new Example(CairnNative.exampleCreate(kind.value()));
  }

  /**
   * Parses one serialized message of {@code kind}.
   *
   * @param kind EXAMPLE or SEQUENCE_EXAMPLE
   * @param data the bytes
   * @return the example
   * @throws CairnException DATA_LOSS for malformed bytes, naming the byte offset
   */
  public static Example parse(ExampleKind kind, byte[] data) {
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(data, "data");
    NativeLibrary.check();
    return new Example(CairnNative.exampleParse(kind.value(), data));
  }

  /**
   * Which message this is.
   *
   * @return EXAMPLE or SEQUENCE_EXAMPLE
   */
  public ExampleKind kind() {
    long h = handle();
    try {
      return ExampleKind.fromValue(CairnNative.exampleGetKind(h));
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * Sets feature {@code key} (a context feature of a SequenceExample) to int64s.
   *
   * @param key the key
   * @param values the values
   * @return this
   */
  public Example set(String key, long... values) {
    Objects.requireNonNull(values, "values");
    byte[] k = NativeResources.cstr(Objects.requireNonNull(key, "key"));
    long h = handle();
    try {
      CairnNative.exampleSetInt64s(h, k, values);
    } finally {
      Reference.reachabilityFence(this);
    }
    return this;
  }

  /**
   * Sets feature {@code key} to floats.
   *
   * @param key the key
   * @param values the values
   * @return this
   */
  public Example set(String key, float... values) {
    floats(key, values, false);
    return this;
  }

  /**
   * Sets feature {@code key} to byte strings.
   *
   * @param key the key
   * @param values the strings (any bytes)
   * @return this
   */
  public Example set(String key, byte[]... values) {
    bytes(key, values, false);
    return this;
  }

  /**
   * Appends one step of int64s to feature list {@code key} of a SequenceExample.
   *
   * @param key the feature list
   * @param values the step's values
   * @return this
   * @throws CairnException INVALID_ARGUMENT for an Example
   */
  public Example appendStep(String key, long... values) {
    Objects.requireNonNull(values, "values");
    byte[] k = NativeResources.cstr(Objects.requireNonNull(key, "key"));
    long h = handle();
    try {
      CairnNative.exampleAppendStepInt64s(h, k, values);
    } finally {
      Reference.reachabilityFence(this);
    }
    return this;
  }

  /**
   * Appends one step of floats to feature list {@code key}.
   *
   * @param key the feature list
   * @param values the step's values
   * @return this
   */
  public Example appendStep(String key, float... values) {
    floats(key, values, true);
    return this;
  }

  /**
   * Appends one step of byte strings to feature list {@code key}.
   *
   * @param key the feature list
   * @param values the step's strings
   * @return this
   */
  public Example appendStep(String key, byte[]... values) {
    bytes(key, values, true);
    return this;
  }

  private void floats(String key, float[] values, boolean append) {
    Objects.requireNonNull(values, "values");
    byte[] k = NativeResources.cstr(Objects.requireNonNull(key, "key"));
    long h = handle();
    try {
      IoNative.exampleFloats(h, k, values, append);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  private void bytes(String key, byte[][] values, boolean append) {
    Objects.requireNonNull(values, "values");
    for (byte[] v : values) Objects.requireNonNull(v, "a byte string");
    byte[] k = NativeResources.cstr(Objects.requireNonNull(key, "key"));
    long h = handle();
    try {
      IoNative.exampleBytes(h, k, values, append);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * The protobuf encoding: keys sorted, lists packed, the bytes of protobuf's deterministic
   * serialization.
   *
   * @return the bytes
   */
  public byte[] serialize() {
    long h = handle();
    try {
      return CairnNative.exampleSerialize(h);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * The feature keys (context features of a SequenceExample), sorted bytewise.
   *
   * @return the keys
   */
  public List<String> keys() {
    long h = handle();
    try {
      long n = CairnNative.exampleFeatureCount(h);
      List<String> keys = new ArrayList<>();
      for (long i = 0; i < n; ++i) keys.add(CairnNative.exampleFeatureKey(h, i));
      return keys;
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * The feature list keys of a SequenceExample, sorted (empty for an Example).
   *
   * @return the keys
   */
  public List<String> featureListKeys() {
    long h = handle();
    try {
      long n = CairnNative.exampleFeatureListCount(h);
      List<String> keys = new ArrayList<>();
      for (long i = 0; i < n; ++i) keys.add(CairnNative.exampleFeatureListKey(h, i));
      return keys;
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * How many steps feature list {@code key} has.
   *
   * @param key the feature list
   * @return the step count
   * @throws CairnException NOT_FOUND naming the key
   */
  public long steps(String key) {
    byte[] k = NativeResources.cstr(Objects.requireNonNull(key, "key"));
    long h = handle();
    try {
      return CairnNative.exampleFeatureListSteps(h, k);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * Which list feature {@code key} holds.
   *
   * @param key the feature
   * @param step {@link #NO_STEP}, or a step of feature list {@code key}
   * @return INT64, FLOAT, BYTES, or NONE for a feature with no list set
   * @throws CairnException NOT_FOUND naming the key; OUT_OF_RANGE for a step past the end
   */
  public FeatureKind featureKind(String key, long step) {
    Object v = values(key, step);
    if (v instanceof long[]) return FeatureKind.INT64;
    if (v instanceof float[]) return FeatureKind.FLOAT;
    if (v instanceof byte[][]) return FeatureKind.BYTES;
    return FeatureKind.NONE;
  }

  /**
   * The int64s of feature {@code key}.
   *
   * @param key the feature
   * @return the values
   * @throws CairnException NOT_FOUND naming the key; INVALID_ARGUMENT for another list kind
   */
  public long[] int64s(String key) {
    return int64s(key, NO_STEP);
  }

  /**
   * The int64s of feature {@code key} or of step {@code step} of feature list {@code key}.
   *
   * @param key the feature
   * @param step {@link #NO_STEP} or the step
   * @return the values (empty for a feature with no list set)
   */
  public long[] int64s(String key, long step) {
    return typed(key, step, long[].class, new long[0], FeatureKind.INT64);
  }

  /**
   * The floats of feature {@code key}.
   *
   * @param key the feature
   * @return the values
   */
  public float[] floats(String key) {
    return floats(key, NO_STEP);
  }

  /**
   * The floats of feature {@code key} or of a step of feature list {@code key}.
   *
   * @param key the feature
   * @param step {@link #NO_STEP} or the step
   * @return the values
   */
  public float[] floats(String key, long step) {
    return typed(key, step, float[].class, new float[0], FeatureKind.FLOAT);
  }

  /**
   * The byte strings of feature {@code key}.
   *
   * @param key the feature
   * @return the strings
   */
  public byte[][] bytes(String key) {
    return bytes(key, NO_STEP);
  }

  /**
   * The byte strings of feature {@code key} or of a step of feature list {@code key}.
   *
   * @param key the feature
   * @param step {@link #NO_STEP} or the step
   * @return the strings
   */
  public byte[][] bytes(String key, long step) {
    return typed(key, step, byte[][].class, new byte[0][], FeatureKind.BYTES);
  }

  private <T> T typed(String key, long step, Class<T> type, T empty, FeatureKind kind) {
    Object v = values(key, step);
    if (type.isInstance(v)) return type.cast(v);
    if (v.getClass() == Object[].class) return empty; // a feature with no list set
    throw new CairnException(
        Code.INVALID_ARGUMENT, "Example: feature '" + key + "' is not a " + kind.name().toLowerCase(Locale.ROOT) + " list");
  }

  private Object values(String key, long step) {
    byte[] k = NativeResources.cstr(Objects.requireNonNull(key, "key"));
    long h = handle();
    try {
      return IoNative.exampleValues(h, k, step);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * Parses serialized tf.train.Examples into tensors, as tf.io.parse_example does (on the
   * context's thread pool).
   *
   * @param ctx the context
   * @param records the serialized records
   * @param specs FIXED_LEN or VAR_LEN specs with distinct keys
   * @return per spec, in spec order, its tensors (FIXED_LEN: values; VAR_LEN: values, row_lengths);
   *     the caller closes them
   * @throws CairnException DATA_LOSS for a malformed record; INVALID_ARGUMENT for a bad spec or a
   *     missing feature without default, naming the record index and the key
   */
  public static Tensor[][] parseExamples(CairnContext ctx, List<byte[]> records, FeatureSpec... specs) {
    return FeatureSpec.parse(ctx, false, records, specs);
  }

  /**
   * Parses serialized tf.train.SequenceExamples into tensors, as tf.io.parse_sequence_example does:
   * FIXED_LEN and VAR_LEN specs read context features, FIXED_LEN_SEQUENCE and VAR_LEN_SEQUENCE
   * specs feature lists.
   *
   * @param ctx the context
   * @param records the serialized records
   * @param specs the specs
   * @return per spec, in spec order, its tensors ({@link FeatureSpec#numOutputs()} of them)
   */
  public static Tensor[][] parseSequenceExamples(CairnContext ctx, List<byte[]> records, FeatureSpec... specs) {
    return FeatureSpec.parse(ctx, true, records, specs);
  }
}
