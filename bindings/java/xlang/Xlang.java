import dev.cairn.CairnContext;
import dev.cairn.Checkpoint;
import dev.cairn.DType;
import dev.cairn.DictObject;
import dev.cairn.ListObject;
import dev.cairn.Module;
import dev.cairn.RestoreStatus;
import dev.cairn.Tensor;
import dev.cairn.Trackable;
import dev.cairn.Variable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * The Java side of the cross-language checkpoint test (tests/xlang/SPEC.md):
 * {@code Xlang save PATH} builds the state and writes it; {@code Xlang restore PATH} builds it with
 * zeros, restores PATH, asserts it was consumed and checks every value.
 * Run: java -cp target/classes xlang/Xlang.java save|restore PATH
 */
public class Xlang {
  private static final float[] W = {0.5f, 1.5f, 2.5f, 3.5f, 4.5f, 5.5f};
  private static final long[] B = {-1, 0, 9_000_000_000L};
  private static final double[] K = {0.25, -0.125};
  private static final boolean[] FLAG = {true, false, false, true};
  private static final short[] HALF = {0x3C00};

  public static void main(String[] args) {
    if (args.length != 2 || !(args[0].equals("save") || args[0].equals("restore"))) {
      System.err.println("usage: Xlang save|restore PATH");
      System.exit(2);
    }
    boolean restore = args[0].equals("restore");
    List<String> failures = new ArrayList<>();
    try (CairnContext ctx = new CairnContext(CairnContext.options().seed(0))) {
      List<Variable> vars = new ArrayList<>();
      try (Checkpoint ckpt = build(ctx, restore, vars)) {
        if (!restore) {
          ckpt.write(args[1]);
        } else {
          try (RestoreStatus status = ckpt.restore(args[1])) {
            status.assertConsumed();
          }
          expect(failures, "model/w", vars.get(0), DType.FLOAT32, W, 2, 3);
          expect(failures, "model/b", vars.get(1), DType.INT64, B, 3);
          expect(failures, "layers/0/k", vars.get(2), DType.FLOAT64, K, 2);
          expect(failures, "layers/1/flag", vars.get(3), DType.BOOL, FLAG, 4);
          expect(failures, "table/half", vars.get(4), DType.FLOAT16, HALF);
        }
      } finally {
        for (Variable v : vars) v.close();
      }
    }
    if (!failures.isEmpty()) {
      failures.forEach(System.out::println);
      System.exit(1);
    }
    if (restore) System.out.println("xlang restore ok");
  }

  /** Builds the spec's state, in its order; {@code zero}: every variable holds zeros. */
  private static Checkpoint build(CairnContext ctx, boolean zero, List<Variable> vars) {
    try (Module m = Module.create(ctx, "net");
        ListObject layers = ListObject.create(ctx);
        Trackable l0 = Trackable.create(ctx);
        Trackable l1 = Trackable.create(ctx);
        DictObject table = DictObject.create(ctx)) {
      m.set("w", variable(ctx, vars, DType.FLOAT32, zero ? new float[6] : W, "w", m, 2, 3));
      m.set("b", variable(ctx, vars, DType.INT64, zero ? new long[3] : B, "b", m, 3));
      l0.set("k", variable(ctx, vars, DType.FLOAT64, zero ? new double[2] : K, "k", null, 2));
      layers.append(l0);
      l1.set("flag", variable(ctx, vars, DType.BOOL, zero ? new boolean[4] : FLAG, "flag", null, 4));
      layers.append(l1);
      table.set("half", variable(ctx, vars, DType.FLOAT16, zero ? new short[1] : HALF, "half", null));
      table.set("shared", l0);
      return Checkpoint.create(ctx, Map.of("model", m, "layers", layers, "table", table));
    }
  }

  private static Variable variable(
      CairnContext ctx, List<Variable> vars, DType dtype, Object data, String name, Module scope, long... shape) {
    try (Tensor t = Tensor.of(ctx, dtype, data, shape)) {
      Variable v = Variable.create(ctx, t, Variable.options().name(name).scope(scope));
      vars.add(v);
      return v;
    }
  }

  private static void expect(
      List<String> failures, String what, Variable v, DType dtype, Object want, long... shape) {
    try (Tensor t = v.read()) {
      if (t.dtype() != dtype || !Arrays.equals(t.shape(), shape)) {
        failures.add(what + ": got " + t + ", want " + dtype.cName() + Arrays.toString(shape));
        return;
      }
      boolean same;
      if (want instanceof float[]) same = Arrays.equals(t.toFloatArray(), (float[]) want);
      else if (want instanceof long[]) same = Arrays.equals(t.toLongArray(), (long[]) want);
      else if (want instanceof double[]) same = Arrays.equals(t.toDoubleArray(), (double[]) want);
      else if (want instanceof boolean[]) same = Arrays.equals(t.toBooleanArray(), (boolean[]) want);
      else same = Arrays.equals(t.toShortArray(), (short[]) want);
      if (!same) failures.add(what + ": the values differ");
    }
  }
}
