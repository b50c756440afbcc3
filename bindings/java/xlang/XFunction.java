import dev.cairn.CairnContext;
import dev.cairn.CompiledFunction;
import dev.cairn.GradientTape;
import dev.cairn.Loss;
import dev.cairn.Ops;
import dev.cairn.Optimizer;
import dev.cairn.Tensor;
import dev.cairn.Variable;

/**
 * The Java side of the cross-language function test (tests/xlang/SPEC.md, "Compiled functions"):
 * {@code XFunction export PATH} trains y = x @ w + b for three SGD steps through a captured
 * training step, traces predict on the query and exports it; {@code XFunction load PATH} loads a
 * file from any language and calls it on the query. Both print outputs as the hex of their
 * float32 bits (exact). Run: java -cp target/classes xlang/XFunction.java
 */
public class XFunction {
  private static final float[] QUERY = {1, 2, 3, -1, 0.5f, 0.25f};

  public static void main(String[] args) {
    if (args.length != 2 || !(args[0].equals("export") || args[0].equals("load"))) {
      System.err.println("usage: XFunction export|load PATH");
      System.exit(2);
    }
    try (CairnContext ctx = new CairnContext()) {
      if (args[0].equals("export")) exportFunction(ctx, args[1]);
      else loadFunction(ctx, args[1]);
    }
  }

  /** x @ w + b, reading both variables. */
  private static Tensor affine(CairnContext ctx, Tensor x, Variable w, Variable b) {
    try (Tensor wv = w.read(); Tensor bv = b.read(); Tensor xw = Ops.matMul(ctx, x, wv)) {
      return Ops.add(ctx, xw, bv);
    }
  }

  private static void callAndPrint(String label, CompiledFunction f, Tensor... inputs) {
    Tensor[] out = f.call(inputs);
    StringBuilder line = new StringBuilder(label);
    try {
      for (float v : out[0].toFloatArray()) line.append(String.format(" %08x", Float.floatToRawIntBits(v)));
    } finally {
      for (Tensor t : out) t.close();
    }
    System.out.println(line);
  }

  private static void exportFunction(CairnContext ctx, String path) {
    try (Tensor w0 = Tensor.of(ctx, new float[] {0.5f, -0.25f}, 2, 1);
        Tensor b0 = Tensor.of(ctx, new float[] {0.1f}, 1);
        Variable w = Variable.create(ctx, w0, Variable.options().name("w"));
        Variable b = Variable.create(ctx, b0, Variable.options().name("b"));
        Optimizer opt = Optimizer.sgd(ctx, 0.1);
        CompiledFunction step = CompiledFunction.create(ctx, "train_step", 1, (c, in) -> {
          try (GradientTape tape = GradientTape.create(c); Tensor y = affine(c, in[0], w, b)) {
            Tensor loss = Loss.meanSquaredError(c, in[1], y);
            Tensor[] grads = tape.gradient(loss, w, b);
            try {
              opt.applyGradients(grads, new Variable[] {w, b});
            } finally {
              for (Tensor g : grads) if (g != null) g.close();
            }
            return new Tensor[] {loss};
          }
        });
        CompiledFunction predict =
            CompiledFunction.create(ctx, "predict", 1, (c, in) -> new Tensor[] {affine(c, in[0], w, b)});
        Tensor x = Tensor.of(ctx, new float[] {1, 0, 0, 1, 1, 1, 2, -1}, 4, 2);
        Tensor y = Tensor.of(ctx, new float[] {1, 2, 3, 0.5f}, 4, 1);
        Tensor q = Tensor.of(ctx, QUERY, 3, 2)) {
      for (int i = 0; i < 3; ++i) callAndPrint("loss", step, x, y);
      callAndPrint("predict", predict, q);
      predict.export(path);
    }
  }

  private static void loadFunction(CairnContext ctx, String path) {
    try (CompiledFunction f = CompiledFunction.load(ctx, path, 1); Tensor q = Tensor.of(ctx, QUERY, 3, 2)) {
      callAndPrint("predict", f, q);
    }
  }
}
