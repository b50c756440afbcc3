import dev.cairn.CairnContext;
import dev.cairn.Checkpoint;
import dev.cairn.CheckpointReader;
import dev.cairn.Layer;
import dev.cairn.Layers;
import dev.cairn.Optimizer;
import dev.cairn.RestoreStatus;
import dev.cairn.Sequential;
import dev.cairn.Tensor;
import dev.cairn.WeightsFormat;
import dev.cairn.WeightsOptions;
import java.io.File;
import java.util.Arrays;
import java.util.Map;

/**
 * Weights from TensorFlow and safetensors: saves a model's weights as safetensors under
 * PyTorch-style names and loads them into a fresh model, lists the file, then exports the model
 * and its optimizer as a TensorFlow checkpoint and restores it into fresh ones.
 * Run: java -cp target/classes example/WeightsExample.java DIRECTORY
 */
public class WeightsExample {
  // Sequential(Dense(4, relu), Dense(2)) on 3 inputs, built by one call.
  static Sequential mlp(CairnContext ctx) {
    try (Layer hidden = Layers.dense(ctx, Layers.denseOptions(4).activation("relu"));
        Layer out = Layers.dense(ctx, Layers.denseOptions(2));
        Tensor x = Tensor.of(ctx, new float[3], 1, 3)) {
      Sequential model = Sequential.of(ctx, "mlp", hidden, out);
      model.call(x).close();
      return model;
    }
  }

  public static void main(String[] args) {
    String dir = args.length > 0 ? args[0] : "/tmp/cairn-weights-example";
    new File(dir).mkdirs();
    try (CairnContext ctx = new CairnContext();
        Sequential model = mlp(ctx);
        Sequential fresh = mlp(ctx)) {
      // By name (Keras' save_weights / load_weights): "model.layer-0.kernel", ...
      WeightsOptions torch = new WeightsOptions().prefix("model.").separator(".").metadata(Map.of("format", "pt"));
      model.saveWeights(dir + "/model.safetensors", WeightsFormat.SAFETENSORS, torch);
      long loaded = fresh.loadWeights(dir + "/model.safetensors", torch); // also a TF or Cairn checkpoint
      System.out.println("loaded " + loaded + " variables");
      try (CheckpointReader reader = CheckpointReader.open(dir + "/model.safetensors")) {
        System.out.println(reader.format() + " format=" + reader.metadata().get("format"));
        for (CheckpointReader.Entry e : reader.entries()) {
          System.out.println(e.key() + " " + e.typeName() + " " + Arrays.toString(e.shape()));
        }
      }
      // By object graph (tf.train.Checkpoint): Keras 3's layout, which TensorFlow restores.
      try (Optimizer adam = Optimizer.adam(ctx, 0.01);
          Checkpoint ckpt = Checkpoint.create(ctx, Map.of("model", model, "optimizer", adam))) {
        ckpt.export(dir + "/tf-ckpt", WeightsFormat.TF); // tf-ckpt.index, tf-ckpt.data-00000-of-00001
      }
      try (Sequential again = mlp(ctx);
          Optimizer adam = Optimizer.adam(ctx, 0.01);
          Checkpoint ckpt = Checkpoint.create(ctx, Map.of("model", again, "optimizer", adam));
          RestoreStatus status = ckpt.restore(dir + "/tf-ckpt")) { // or what Keras wrote
        status.assertExistingObjectsMatched();
        try (Tensor x = Tensor.of(ctx, new float[] {1, 2, 3}, 1, 3);
            Tensor want = model.call(x);
            Tensor got = again.call(x)) {
          System.out.println("restored from TensorFlow: same outputs " + Arrays.equals(want.toFloatArray(), got.toFloatArray()));
        }
      }
    }
  }
}
