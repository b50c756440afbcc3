import dev.cairn.CairnContext;
import dev.cairn.Ops;
import dev.cairn.Tensor;

/**
 * Per-call cost of a 16-element float32 Add through the Java binding (compare: ~115 ns/op through
 * the C API). Run: java -cp target/classes -Dcairn.jni.path=... example/AddBenchmark.java [iterations]
 */
public class AddBenchmark {
  public static void main(String[] args) {
    int iterations = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
    float[] data = new float[16];
    for (int i = 0; i < data.length; ++i) data[i] = i;
    try (CairnContext ctx = new CairnContext(CairnContext.options().numThreads(1));
        Tensor a = Tensor.of(ctx, data, 16);
        Tensor b = Tensor.of(ctx, data, 16)) {
      // Warm up the JIT, then time closing each result explicitly (the recommended use).
      run(ctx, a, b, Math.min(iterations, 200_000));
      long start = System.nanoTime();
      run(ctx, a, b, iterations);
      long elapsed = System.nanoTime() - start;
      System.out.printf("Add float32[16]: %.1f ns/op over %d iterations%n", (double) elapsed / iterations, iterations);
    }
  }

  private static void run(CairnContext ctx, Tensor a, Tensor b, int iterations) {
    for (int i = 0; i < iterations; ++i) {
      try (Tensor c = Ops.add(ctx, a, b)) {
        // closed at once
      }
    }
  }
}
