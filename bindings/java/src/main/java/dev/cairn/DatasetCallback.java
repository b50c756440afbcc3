package dev.cairn;

import java.util.List;

/**
 * A Java callback of a dataset, as the C library calls it (src/main/native/cairn_jni_data.c): the
 * C {@code user_data} is a JNI global reference to one of these, deleted by the C {@code release}
 * hook once the last dataset using it is freed. Called on Cairn's worker threads, several at
 * once; it keeps no mutable state. What a method throws becomes the C callback's error status (a
 * CairnException's code, else UNKNOWN, and the message), which the iterator reports for that
 * element. Package-private.
 */
final class DatasetCallback {
  private final String what; // names the callback in messages: "map 'scale'"
  private final List<String> inputNames;
  private final int numOutputs;
  private final CompiledFunction.Body body; // map and filter
  private final Dataset.Generator generator;
  private final Dataset.InterleaveFn interleave;

  private DatasetCallback(String what, List<String> inputNames, int numOutputs, CompiledFunction.Body body,
      Dataset.Generator generator, Dataset.InterleaveFn interleave) {
    this.what = what;
    this.inputNames = inputNames;
    this.numOutputs = numOutputs;
    this.body = body;
    this.generator = generator;
    this.interleave = interleave;
  }

  static DatasetCallback map(String what, List<String> inputNames, int numOutputs, Dataset.MapFn fn) {
    return new DatasetCallback(what, inputNames, numOutputs, (c, in) -> fn.apply(c, new Element(inputNames, in)),
        null, null);
  }

  static DatasetCallback filter(String what, List<String> inputNames, Dataset.Predicate fn) {
    return new DatasetCallback(what, inputNames, 1,
        (c, in) -> new Tensor[] {fn.test(c, new Element(inputNames, in))}, null, null);
  }

  static DatasetCallback generator(String what, int numOutputs, Dataset.Generator fn) {
    return new DatasetCallback(what, null, numOutputs, null, fn, null);
  }

  static DatasetCallback interleave(String what, List<String> inputNames, Dataset.InterleaveFn fn) {
    return new DatasetCallback(what, inputNames, 0, null, null, fn);
  }

  // cairn_function_fn (map, filter): the inputs are borrowed, the outputs handed over.
  void function(long ctx, long[] inputs, long[] outputs) throws Exception {
    CompiledFunction.runBody(what, numOutputs, body, ctx, inputs, outputs);
  }

  // cairn_generator_fn: false at the end.
  boolean generate(long ctx, long index, long[] outputs) throws Exception {
    try (CairnContext c = CairnContext.borrow(ctx)) {
      Tensor[] results = generator.next(c, index);
      if (results == null) return false;
      CompiledFunction.handOver(what, numOutputs, results, outputs);
      return true;
    }
  }

  // cairn_dataset_fn (interleave): a new dataset handle, which the C library takes.
  long dataset(long ctx, long[] element) throws Exception {
    try (CairnContext c = CairnContext.borrow(ctx); Element e = Element.share(inputNames, element)) {
      Dataset d = interleave.apply(c, e);
      if (d == null) throw new NullPointerException(what + " returned null");
      return d.take();
    }
  }
}
