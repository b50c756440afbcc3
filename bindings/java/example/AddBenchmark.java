import dev.cairn.CairnContext;
import dev.cairn.Ops;
import dev.cairn.Tensor;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.lang.reflect.Method;

/**
 * Per-call cost of a 16-element float32 Add through the Java binding (Ops.add + close, the whole
 * path a user's call takes), against the same op run from C in the same process: a loop of
 * cairn_op_run + cairn_tensor_free inside one JNI call (the binding's package-private
 * OpNative.benchLoop, reached by reflection). Prints wall and CPU time per op for both (CPU time
 * is steadier on a busy machine), three rounds alternating, then the best Java-over-C difference.
 * Run: java -cp target/classes example/AddBenchmark.java [iterations]
 */
public class AddBenchmark {
  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

  public static void main(String[] args) throws Exception {
    int iterations = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
    float[] data = new float[16];
    for (int i = 0; i < data.length; ++i) data[i] = i;
    Class<?> opNative = Class.forName("dev.cairn.OpNative");
    Method name = opNative.getDeclaredMethod("name", String.class);
    Method loop = opNative.getDeclaredMethod("benchLoop", long.class, long.class, int.class, long.class, long.class,
        long.class, int.class);
    Method handle = Class.forName("dev.cairn.NativeHandle").getDeclaredMethod("handle");
    name.setAccessible(true);
    loop.setAccessible(true);
    handle.setAccessible(true);
    long add = (long) name.invoke(null, "Add");
    try (CairnContext ctx = new CairnContext(CairnContext.options().numThreads(1));
        Tensor a = Tensor.of(ctx, data, 16);
        Tensor b = Tensor.of(ctx, data, 16)) {
      long c = (long) handle.invoke(ctx);
      long ha = (long) handle.invoke(a);
      long hb = (long) handle.invoke(b);
      double bestWall = Double.MAX_VALUE;
      double bestCpu = Double.MAX_VALUE;
      for (int round = 0; round < 3; ++round) {
        double[] java = time("Ops.add + close", iterations, n -> {
          for (int i = 0; i < n; ++i) {
            try (Tensor t = Ops.add(ctx, a, b)) {
              // closed at once, as recommended
            }
          }
        });
        double[] cOnly = time("C (cairn_op_run + cairn_tensor_free)", iterations, n -> {
          try {
            loop.invoke(null, c, add, 2, ha, hb, 0L, n);
          } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
          }
        });
        bestWall = Math.min(bestWall, java[0] - cOnly[0]);
        bestCpu = Math.min(bestCpu, java[1] - cOnly[1]);
      }
      System.out.printf("Add float32[16], Java over C (best round): %.1f ns/op wall, %.1f ns/op cpu over %d iterations%n",
          bestWall, bestCpu, iterations);
    }
  }

  private interface Loop {
    void run(int iterations);
  }

  // {wall, cpu} nanoseconds per op.
  private static double[] time(String name, int iterations, Loop loop) {
    loop.run(Math.min(iterations, 200_000)); // JIT warm-up
    long cpu0 = THREADS.getCurrentThreadCpuTime();
    long wall0 = System.nanoTime();
    loop.run(iterations);
    long wall = System.nanoTime() - wall0;
    long cpu = THREADS.getCurrentThreadCpuTime() - cpu0;
    double[] perOp = {(double) wall / iterations, (double) cpu / iterations};
    System.out.printf("Add float32[16], %s: %.1f ns/op wall, %.1f ns/op cpu over %d iterations%n",
        name, perOp[0], perOp[1], iterations);
    return perOp;
  }
}
