import dev.cairn.BuiltinCallback;
import dev.cairn.CairnContext;
import dev.cairn.Callback;
import dev.cairn.Checkpoint;
import dev.cairn.DType;
import dev.cairn.Dataset;
import dev.cairn.Element;
import dev.cairn.Layer;
import dev.cairn.Layers;
import dev.cairn.Model;
import dev.cairn.Ops;
import dev.cairn.Optimizer;
import dev.cairn.Tensor;
import java.util.Arrays;
import java.util.List;
import java.util.stream.IntStream;

/**
 * Keras-style training in Java: a two-layer MLP learns the 8x8 handwritten digits (the first 357
 * rows of the CSV are the test set) with Model.fit, a ModelCheckpoint and a TensorBoard callback,
 * is evaluated, then restored into a fresh model in TensorFlow's one expression (the checkpoint and
 * its status are dropped at once; the values wait on the fresh model until predict builds it),
 * which predicts the same.
 *
 * <p>Run from the repository root (after mvn compile in bindings/java):
 * java -cp bindings/java/target/classes bindings/java/example/FitDigits.java examples/data/digits.csv /tmp/fit-digits
 */
public class FitDigits {
  /** A CSV row (64 pixels 0..16, a label) as x (float32[64]) and the label. */
  static Tensor[] prepare(CairnContext c, Element row) {
    Tensor[] pixels = IntStream.range(0, 64).mapToObj(row::get).toArray(Tensor[]::new);
    return new Tensor[] {Ops.pack(c, pixels), row.get(64)};
  }

  /** Dense(64, relu) -> Dense(10) logits, compiled with Adam, sparse crossentropy and accuracy. */
  static Model mlp(CairnContext ctx) {
    try (Layer hidden = Layers.dense(ctx, Layers.denseOptions(64).activation("relu"));
        Layer logits = Layers.dense(ctx, 10); Optimizer adam = Optimizer.adam(ctx, 0.001)) {
      return Model.of(ctx, hidden, logits).compile(adam, "sparse_categorical_crossentropy", "accuracy");
    }
  }

  public static void main(String[] args) {
    DType[] columns = IntStream.range(0, 65).mapToObj(i -> i < 64 ? DType.FLOAT32 : DType.INT32).toArray(DType[]::new);
    try (CairnContext ctx = new CairnContext(CairnContext.options().seed(1));
        Dataset csv = Dataset.csv(ctx, List.of(args[0]), Dataset.csvOptions(columns));
        Dataset digits = csv.map("prepare", FitDigits::prepare, Dataset.mapOptions().outputs("x", "label"));
        Dataset rest = digits.skip(357); Dataset shuffled = rest.shuffle(1440, 7, true);
        Dataset train = shuffled.batch(32); Dataset first = digits.take(357); Dataset test = first.batch(64);
        Model model = mlp(ctx); Model fresh = mlp(ctx);
        BuiltinCallback checkpoints = Callback.modelCheckpoint(ctx, args[1] + "/checkpoints");
        BuiltinCallback tensorBoard = Callback.tensorBoard(args[1] + "/logs")) {
      model.fit(train, Model.fitOptions().epochs(20).validationData(test).callbacks(checkpoints, tensorBoard));
      System.out.printf("test accuracy: %.4f%n", model.evaluate(test).get("accuracy"));
      Checkpoint.create(ctx, "model", fresh).restore(args[1] + "/checkpoints/ckpt-20").expectPartial();
      try (Tensor expected = model.predict(test); Tensor restored = fresh.predict(test)) {
        System.out.println("same predictions: " + Arrays.equals(expected.toFloatArray(), restored.toFloatArray()));
      }
    }
  }
}
