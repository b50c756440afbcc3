package dev.cairn;

/**
 * The hand-written part of the raw layer for datasets (src/main/native/cairn_jni_data.c): the
 * tf.data functions the generator leaves unbound, and those taking a host callback, which go
 * through a {@link DatasetCallback} held by a JNI global reference until the C library releases
 * it. Same conventions as {@link CairnNative}. Package-private.
 */
final class DataNative {
  private DataNative() {}

  /** cairn_dataset_component's name. */
  static native String componentName(long ds, long index);

  /** cairn_dataset_component's dtype (the C value). */
  static native int componentDtype(long ds, long index);

  /** cairn_dataset_component's shape (-1 for unknown dims). */
  static native long[] componentShape(long ds, long index);

  /**
   * cairn_dataset_csv. {@code set} bit 0: header, bit 1: delimiter; null arrays and naValue keep
   * the defaults; a null element of defaults is a required column.
   */
  static native long csv(long ctx, byte[][] paths, int[] dtypes, byte[][] defaults, byte[][] names, long[] select,
      long set, int header, int delimiter, byte[] naValue);

  /** cairn_dataset_from_generator. */
  static native long fromGenerator(long ctx, byte[][] names, int[] dtypes, long[][] shapes, DatasetCallback callback);

  /**
   * cairn_dataset_map. {@code set} bits: 0 numParallelCalls, 1 deterministic, 2 compile, 3 seed;
   * null outputNames / outputDtypes keep the defaults.
   */
  static native long map(long in, byte[] name, DatasetCallback callback, long set, int numParallelCalls,
      boolean deterministic, boolean compile, byte[][] outputNames, int[] outputDtypes, long[][] outputShapes,
      long numOutputs, long seed);

  /** cairn_dataset_filter. {@code set} bits: 0 compile, 1 seed. */
  static native long filter(long in, byte[] name, DatasetCallback callback, long set, boolean compile, long seed);

  /**
   * cairn_dataset_interleave. {@code set} bits: 0 cycleLength, 1 blockLength, 2 numParallelCalls,
   * 3 deterministic.
   */
  static native long interleave(long in, DatasetCallback callback, byte[][] names, int[] dtypes, long[][] shapes,
      long set, int cycleLength, int blockLength, int numParallelCalls, boolean deterministic);

  /** cairn_dataset_padded_batch: null shapeDtypes for no padded shapes; paddingValues 0 for zeros. */
  static native long paddedBatch(long in, long batchSize, boolean dropRemainder, int[] shapeDtypes,
      long[][] paddedShapes, long[] paddingValues);

  /** cairn_iterator_next: true with new tensor handles in outputs, false at the end of data. */
  static native boolean iteratorNext(long it, long[] outputs);

  /** cairn_iterator_save: the state's bytes. */
  static native byte[] iteratorSave(long it);
}
