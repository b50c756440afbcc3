package dev.cairn;

/**
 * The hand-written part of the raw layer for models (src/main/native/cairn_jni_model.c): the
 * functions the generator leaves unbound (arrays of layers, metrics and callbacks, nested data
 * structs) and those taking host code, which go through a {@link CallbackAdapter} held by a JNI
 * global reference until the C library releases the callback. Same conventions as {@link
 * CairnNative}. Package-private.
 */
final class ModelNative {
  private ModelNative() {}

  /** cairn_model_create: name null for the default; layers null or handles. */
  static native long create(long ctx, byte[] name, long[] layers);

  /** cairn_model_compile. {@code set} bits: 0 fromLogits, 1 runEagerly; metrics null: none. */
  static native void compile(long model, long optimizer, byte[] loss, byte[][] metrics, long set, boolean fromLogits,
      boolean runEagerly);

  /**
   * cairn_model_fit: data {dataset, x, y}; validation null or {dataset, x, y}; ints {epochs,
   * batchSize, initialEpoch, stepsPerEpoch, seed, validationBatchSize, validationFreq}, each used
   * when its bit (0..6) of {@code set} is set; bit 7 shuffle, bit 8 verbose. Returns the history.
   */
  static native long fit(long model, long[] data, long[] validation, long set, long[] ints, boolean shuffle,
      int verbose, long[] callbacks);

  /** cairn_model_evaluate. {@code set} bits: 0 batchSize, 1 steps. Returns the logs. */
  static native long evaluate(long model, long dataset, long x, long y, long set, long batchSize, long steps,
      long[] callbacks);

  /** cairn_history_values, copied; null for a name the history does not have. */
  static native double[] historyValues(long history, byte[] name);

  /** cairn_callback_csv_logger. {@code set} bits: 0 separator, 1 append. */
  static native long csvLogger(byte[] path, long set, byte separator, boolean append);

  /** cairn_callback_create with the hooks of {@code mask} (bit i: {@link CallbackAdapter}'s hook i). */
  static native long callbackCreate(CallbackAdapter adapter, int mask);

  /** cairn_callback_learning_rate_scheduler. */
  static native long learningRateScheduler(CallbackAdapter.Schedule schedule);
}
