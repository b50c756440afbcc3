package dev.cairn;

import java.lang.ref.Reference;
import java.util.List;
import java.util.Objects;

/**
 * One feature to parse with {@link Example#parseExamples} or {@link Example#parseSequenceExamples}
 * (cairn_feature_spec): tf.io.FixedLenFeature, VarLenFeature, FixedLenSequenceFeature and a ragged
 * sequence feature. dtype FLOAT32 reads float lists, INT64 int64 lists and UINT8 byte lists (the
 * bytes of the feature's strings concatenated). Immutable.
 *
 * <pre>{@code
 * Tensor[][] out = Example.parseExamples(ctx, records,
 *     FeatureSpec.fixedLen("pixels", DType.FLOAT32, 64), FeatureSpec.varLen("tags", DType.INT64));
 * // out[0][0]: pixels [n, 64]; out[1][0]: the tags of all records, out[1][1]: their row lengths [n]
 * }</pre>
 */
public final class FeatureSpec {
  private final String key;
  private final FeatureSpecKind kind;
  private final DType dtype;
  private final long[] shape;
  private final Tensor defaultValue;

  private FeatureSpec(String key, FeatureSpecKind kind, DType dtype, long[] shape, Tensor defaultValue) {
    this.key = Objects.requireNonNull(key, "key");
    this.kind = Objects.requireNonNull(kind, "kind");
    this.dtype = Objects.requireNonNull(dtype, "dtype");
    this.shape = Objects.requireNonNull(shape, "shape").clone();
    this.defaultValue = defaultValue;
  }

  /**
   * FIXED_LEN: one output, values [batch, shape...]; a missing feature is an error unless a
   * default is given ({@link #withDefault}).
   *
   * @param key the feature
   * @param dtype FLOAT32, INT64 or UINT8
   * @param shape the shape per record
   * @return the spec
   */
  public static FeatureSpec fixedLen(String key, DType dtype, long... shape) {
    return new FeatureSpec(key, FeatureSpecKind.FIXED_LEN, dtype, shape, null);
  }

  /**
   * VAR_LEN: two outputs, values [total] and row_lengths int64 [batch].
   *
   * @param key the feature
   * @param dtype FLOAT32, INT64 or UINT8
   * @return the spec
   */
  public static FeatureSpec varLen(String key, DType dtype) {
    return new FeatureSpec(key, FeatureSpecKind.VAR_LEN, dtype, new long[0], null);
  }

  /**
   * FIXED_LEN_SEQUENCE (a feature list): two outputs, values [batch, max_steps, shape...] padded
   * with the default (zeros without one) and lengths int64 [batch].
   *
   * @param key the feature list
   * @param dtype FLOAT32, INT64 or UINT8
   * @param shape the shape per step
   * @return the spec
   */
  public static FeatureSpec fixedLenSequence(String key, DType dtype, long... shape) {
    return new FeatureSpec(key, FeatureSpecKind.FIXED_LEN_SEQUENCE, dtype, shape, null);
  }

  /**
   * VAR_LEN_SEQUENCE (a ragged feature list): three outputs, values [total], step_lengths int64
   * [total_steps] and steps int64 [batch].
   *
   * @param key the feature list
   * @param dtype FLOAT32, INT64 or UINT8
   * @return the spec
   */
  public static FeatureSpec varLenSequence(String key, DType dtype) {
    return new FeatureSpec(key, FeatureSpecKind.VAR_LEN_SEQUENCE, dtype, new long[0], null);
  }

  /**
   * This spec with a default: FIXED_LEN's value for a missing feature, FIXED_LEN_SEQUENCE's padding.
   * The tensor has the spec's dtype and one element or the shape's element count; it is borrowed
   * by each parse (keep it open until then).
   *
   * @param value the default
   * @return a new spec
   */
  public FeatureSpec withDefault(Tensor value) {
    return new FeatureSpec(key, kind, dtype, shape, Objects.requireNonNull(value, "value"));
  }

  /**
   * The feature's key.
   *
   * @return the key
   */
  public String key() {
    return key;
  }

  /**
   * The spec's kind.
   *
   * @return the kind
   */
  public FeatureSpecKind kind() {
    return kind;
  }

  /**
   * How many tensors this spec parses into: 1 (FIXED_LEN), 2 (VAR_LEN, FIXED_LEN_SEQUENCE) or 3
   * (VAR_LEN_SEQUENCE).
   *
   * @return the count
   */
  public int numOutputs() {
    switch (kind) {
      case FIXED_LEN:
        return 1;
      case VAR_LEN_SEQUENCE:
        return 3;
      default:
        return 2;
    }
  }

  // The specs as the parallel arrays the raw layer takes (IoNative); `total` counts their outputs.
  static final class Marshalled {
    final byte[][] keys;
    final int[] kinds;
    final int[] dtypes;
    final long[][] shapes;
    final long[] defaults;
    int total;

    Marshalled(FeatureSpec[] specs) {
      Objects.requireNonNull(specs, "specs");
      int n = specs.length;
      keys = new byte[n][];
      kinds = new int[n];
      dtypes = new int[n];
      shapes = new long[n][];
      defaults = new long[n];
      for (int i = 0; i < n; ++i) {
        FeatureSpec s = Objects.requireNonNull(specs[i], "spec");
        keys[i] = NativeResources.cstr(s.key);
        kinds[i] = s.kind.value();
        dtypes[i] = s.dtype.value();
        shapes[i] = s.shape;
        defaults[i] = s.defaultValue == null ? 0 : s.defaultValue.handle();
        total += s.numOutputs();
      }
    }
  }

  static Tensor[][] parse(CairnContext ctx, boolean sequence, List<byte[]> records, FeatureSpec[] specs) {
    Objects.requireNonNull(ctx, "ctx");
    Objects.requireNonNull(records, "records");
    Marshalled m = new Marshalled(specs);
    int n = specs.length;
    byte[][] keys = m.keys;
    int[] kinds = m.kinds;
    int[] dtypes = m.dtypes;
    long[][] shapes = m.shapes;
    long[] defaults = m.defaults;
    int total = m.total;
    byte[][] recs = records.toArray(new byte[0][]);
    for (byte[] r : recs) Objects.requireNonNull(r, "record");
    long c = ctx.handle();
    long[] handles;
    try {
      long expected = IoNative.parseNumOutputs(keys, kinds, dtypes, shapes, defaults);
      if (expected != total) {
        throw new IllegalStateException("cairn_parse_num_outputs gives " + expected + " outputs, expected " + total);
      }
      handles = IoNative.parseExamples(c, sequence, recs, keys, kinds, dtypes, shapes, defaults, total);
    } finally {
      Reference.reachabilityFence(ctx);
      Reference.reachabilityFence(specs);
    }
    Tensor[][] out = new Tensor[n][];
    int k = 0;
    for (int i = 0; i < n; ++i) {
      out[i] = new Tensor[specs[i].numOutputs()];
      for (int j = 0; j < out[i].length; ++j) out[i][j] = new Tensor(handles[k++]);
    }
    return out;
  }

  @Override
  public String toString() {
    return "FeatureSpec(" + kind + " '" + key + "' " + dtype + " " + java.util.Arrays.toString(shape) + ")";
  }
}
