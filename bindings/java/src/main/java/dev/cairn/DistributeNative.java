package dev.cairn;

/**
 * The hand-written part of the raw layer for mirrored strategies (src/main/native/cairn_jni_distribute.c):
 * the calls whose output count the generator cannot know. Same conventions as {@link CairnNative}.
 * Package-private.
 */
final class DistributeNative {
  private DistributeNative() {}

  /** cairn_strategy_split_batch: {@code parts} has one slot per replica and receives new handles. */
  static native void splitBatch(long strategy, long global, long[] parts);

  /**
   * cairn_strategy_iterator_next: {@code parts} has numReplicas * nComponents slots (replica-major)
   * and receives new handles; OUT_OF_RANGE at the end of the data.
   */
  static native void iteratorNext(long strategy, long iterator, long[] parts, int nComponents);
}
