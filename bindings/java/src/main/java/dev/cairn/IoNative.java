package dev.cairn;

/**
 * The hand-written part of the raw layer (src/main/native/cairn_jni_io.c): the 1.1 functions the
 * generator leaves unbound (see CairnNative's "Not bound" list). Same conventions as {@link
 * CairnNative}: handles are {@code long}, C strings UTF-8 {@code byte[]}, a failed status throws
 * {@link CairnException}. Package-private.
 */
final class IoNative {
  private IoNative() {}

  /** cairn_record_reader_next: the record, or null at the end or at a partial record. */
  static native byte[] recordReaderNext(long r);

  /** cairn_record_shard_range: {begin, end}. */
  static native long[] recordShardRange(long count, long numShards, long shard);

  /** cairn_example_set_floats, or cairn_example_append_step_floats when {@code append}. */
  static native void exampleFloats(long ex, byte[] key, float[] values, boolean append);

  /** cairn_example_set_bytes, or cairn_example_append_step_bytes when {@code append}. */
  static native void exampleBytes(long ex, byte[] key, byte[][] values, boolean append);

  /**
   * cairn_example_values (+ cairn_example_bytes): long[], float[], byte[][], or an empty Object[]
   * for a feature with no list set.
   */
  static native Object exampleValues(long ex, byte[] key, long step);

  /** cairn_parse_num_outputs over specs given as parallel arrays. */
  static native long parseNumOutputs(byte[][] keys, int[] kinds, int[] dtypes, long[][] shapes, long[] defaults);

  /** cairn_parse_examples (or cairn_parse_sequence_examples): new tensor handles. */
  static native long[] parseExamples(long ctx, boolean sequence, byte[][] records, byte[][] keys, int[] kinds,
      int[] dtypes, long[][] shapes, long[] defaults, int numOutputs);

  /** cairn_dataset_parse_example over specs given as parallel arrays (as parseExamples). */
  static native long datasetParseExample(long in, byte[] component, byte[][] keys, int[] kinds, int[] dtypes,
      long[][] shapes, long[] defaults);

  /** cairn_profile_event: fills names[0..2] (name, category, device); returns {start, duration}. */
  static native long[] profileEvent(long p, long index, String[] names);
}
