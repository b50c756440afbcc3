import dev.cairn.CairnContext;
import dev.cairn.Ops;
import dev.cairn.Tensor;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

/**
 * Per-call cost of a 16-element float32 Add through the Java binding; compare the C API's figure
 * (bench/dispatch_bench, ~115 ns/op). Prints wall and CPU time per op (CPU time is steadier on a
 * busy machine) for Ops.add + close, the whole path a user's call takes.
 * Run: java -cp target/classes example/AddBenchmark.java [iterations]
 */
public class AddBenchmark {
  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

  public static void main(String[] args) {
    int iterations = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
    float[] data = new float[16];
    for (int i = 0; i < data.length; ++i) data[i] = i;
    try (CairnContext ctx = new CairnContext(CairnContext.options().numThreads(1));
        Tensor a = Tensor.of(ctx, data, 16);
        Tensor b = Tensor.of(ctx, data, 16)) {
      time("Ops.add + close", iterations, n -> {
        for (int i = 0; i < n; ++i) {
          try (Tensor c = Ops.add(ctx, a, b)) {
            // closed at once, as recommended
          }
        }
      });
    }
  }

  private interface Loop {
    void run(int iterations);
  }

  private static void time(String name, int iterations, Loop loop) {
    loop.run(Math.min(iterations, 200_000)); // JIT warm-up
    long cpu0 = THREADS.getCurrentThreadCpuTime();
    long wall0 = System.nanoTime();
    loop.run(iterations);
    long wall = System.nanoTime() - wall0;
    long cpu = THREADS.getCurrentThreadCpuTime() - cpu0;
    System.out.printf("Add float32[16], %s: %.1f ns/op wall, %.1f ns/op cpu over %d iterations%n",
        name, (double) wall / iterations, (double) cpu / iterations, iterations);
  }
}
