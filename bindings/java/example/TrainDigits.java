import dev.cairn.CairnContext;
import dev.cairn.Checkpoint;
import dev.cairn.CheckpointManager;
import dev.cairn.CompiledFunction;
import dev.cairn.DType;
import dev.cairn.GradientTape;
import dev.cairn.Layer;
import dev.cairn.Layers;
import dev.cairn.Loss;
import dev.cairn.Metric;
import dev.cairn.Ops;
import dev.cairn.Optimizer;
import dev.cairn.OptimizerKind;
import dev.cairn.RestoreStatus;
import dev.cairn.Sequential;
import dev.cairn.SummaryWriter;
import dev.cairn.Tensor;
import dev.cairn.Variable;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Cairn's training demo: an MLP (64 -> 64 relu -> 10) learns the UCI 8x8 handwritten digits.
 *
 * <p>Each epoch shuffles the training set (a permutation drawn from the epoch number, so the data
 * order is part of the checkpointed state), trains with Adam on mini-batches in a compiled
 * function "train_step" (a gradient tape inside; traced once per batch shape, then replayed), and
 * saves model, optimizer and epoch with a checkpoint manager (3 kept). Run it again and it resumes
 * from the latest checkpoint. It ends with the accuracy on the held-out test split. With --logdir it
 * writes the epoch's loss and accuracy and the graph of train_step for TensorBoard ({@code
 * tensorboard --logdir DIR}). It follows examples/TRAINING_DEMO.md and prints the same lines as
 * examples/c/train_digits.c.
 *
 * <p>Run (from bindings/java): java -cp target/classes example/TrainDigits.java
 * [--data ../../examples/data/digits.csv] [--dir checkpoint_dir] [--epochs N] [--logdir DIR]
 */
public class TrainDigits {
  static final int FEATURES = 64;
  static final int CLASSES = 10;
  static final int HIDDEN = 64;
  static final int BATCH = 32;
  static final double LEARNING_RATE = 0.005;
  static final long SHUFFLE_SEED = 7;
  static final long CONTEXT_SEED = 1;

  /** One split of the data: n x 64 pixels / 16 and n labels. */
  record Split(float[] x, int[] y, int n) {}

  public static void main(String[] args) throws IOException {
    String data = "examples/data/digits.csv";
    String dir = null;
    String logdir = null;
    long epochs = 20;
    int a = 0;
    for (; a + 1 < args.length; a += 2) {
      if (args[a].equals("--data")) data = args[a + 1];
      else if (args[a].equals("--dir")) dir = args[a + 1];
      else if (args[a].equals("--epochs")) epochs = parseLong(args[a + 1]);
      else if (args[a].equals("--logdir")) logdir = args[a + 1];
      else break;
    }
    if (a < args.length || epochs < 1) {
      System.err.println("usage: TrainDigits [--data digits.csv] [--dir checkpoint_dir] [--epochs N>=1] [--logdir DIR]");
      System.exit(2);
    }
    if (dir == null) dir = defaultDir();

    Split[] splits = loadDigits(Paths.get(data));
    Split train = splits[0];
    Split test = splits[1];
    try (CairnContext ctx = new CairnContext(CairnContext.options().seed(CONTEXT_SEED));
        Tensor xTrain = Tensor.of(ctx, train.x(), train.n(), FEATURES);
        Tensor yTrain = Tensor.of(ctx, train.y(), train.n());
        Tensor xTest = Tensor.of(ctx, test.x(), test.n(), FEATURES);
        Tensor yTest = Tensor.of(ctx, test.y(), test.n())) {
      System.out.printf("digits: %d training and %d test samples of 8x8 pixels%n", train.n(), test.n());
      run(ctx, dir, logdir, epochs, train.n(), xTrain, yTrain, xTest, yTest);
    }
  }

  static void run(CairnContext ctx, String dir, String logdir, long epochs, int nTrain, Tensor xTrain,
      Tensor yTrain, Tensor xTest, Tensor yTest) {
    try (Sequential model = buildModel(ctx);
        Optimizer optimizer =
            Optimizer.create(ctx, Optimizer.options().kind(OptimizerKind.ADAM).learningRate(LEARNING_RATE));
        Variable epochVar = epochVariable(ctx);
        Checkpoint ckpt =
            Checkpoint.create(ctx, Map.of("epoch", epochVar, "model", model, "optimizer", optimizer));
        CheckpointManager manager =
            CheckpointManager.create(ckpt, dir, CheckpointManager.options().maxToKeep(3))) {
      long epoch = 0;
      String latest = manager.latest();
      if (latest != null) {
        // The optimizer's slots are restored when its next step creates them; with no epoch left
        // to train they never are, which is expected here.
        try (RestoreStatus status = ckpt.restore(latest)) {
          status.expectPartial();
        }
        try (Tensor t = epochVar.read()) {
          epoch = t.toLongArray()[0];
        }
        System.out.printf("resumed from %s after epoch %d%n", latest, epoch);
      }

      // Build the model on one sample (a restore above is applied as its variables appear).
      try (Tensor first = Ops.slice(ctx, xTest, new long[] {0, 0}, 1, FEATURES);
          Tensor out = model.call(first, false)) {
        System.out.print(model.summary());
      }

      // Traced once per batch shape: full batches and the smaller last batch of an epoch.
      try (CompiledFunction step = trainStep(ctx, model, optimizer);
          Metric lossMean = Metric.mean(ctx, "loss");
          Metric accuracy = Metric.accuracy(ctx, "accuracy");
          SummaryWriter writer = logdir == null ? null : SummaryWriter.create(logdir)) {
        for (long first = epoch; epoch < epochs; ++epoch) {
          long start = System.nanoTime();
          lossMean.reset();
          accuracy.reset();
          trainEpoch(ctx, step, xTrain, yTrain, nTrain, epoch, lossMean, accuracy);
          double seconds = (System.nanoTime() - start) * 1e-9;
          try (Tensor t = Tensor.scalar(ctx, epoch + 1)) {
            epochVar.assign(t);
          }
          manager.save(epoch + 1);
          System.out.printf("epoch %2d/%d  loss %s  accuracy %s  %s examples/s%n", epoch + 1, epochs,
              fixed(lossMean.result(), 4), fixed(accuracy.result(), 4), fixed(nTrain / seconds, 0));
          if (writer != null) {
            writer.scalar("epoch_loss", lossMean.result(), epoch + 1);
            writer.scalar("epoch_accuracy", accuracy.result(), epoch + 1);
            if (epoch == first) writer.graph(step, 0, 0);
          }
        }
      }
      System.out.println("test accuracy: " + fixed(testAccuracy(ctx, model, xTest, yTest), 4));
    }
  }

  static Sequential buildModel(CairnContext ctx) {
    try (Layer hidden = Layers.dense(ctx, Layers.denseOptions(HIDDEN).activation("relu"));
        Layer logits = Layers.dense(ctx, CLASSES)) {
      return Sequential.of(ctx, "mlp", hidden, logits);
    }
  }

  static Variable epochVariable(CairnContext ctx) {
    try (Tensor zero = Tensor.scalar(ctx, 0L)) {
      return Variable.create(ctx, zero, Variable.options().name("epoch").trainable(false));
    }
  }

  /** The epoch's order of the training samples: the indices that sort uniform draws (seeded by the epoch). */
  static Tensor epochPermutation(CairnContext ctx, long n, long epoch) {
    Ops.RandomUniformAttrs attrs =
        Ops.RandomUniformAttrs.builder().dtype(DType.FLOAT32).seed(SHUFFLE_SEED).seed2(epoch + 1);
    try (Tensor draws = Ops.randomUniform(ctx, new long[] {n}, attrs)) {
      Tensor[] top = Ops.topKV2(ctx, draws, n);
      top[0].close();
      return top[1];
    }
  }

  /** Rows begin .. begin+size of {@code perm} gathered from {@code data}. */
  static Tensor batchOf(CairnContext ctx, Tensor data, Tensor perm, long begin, long size) {
    try (Tensor idx = Ops.slice(ctx, perm, new long[] {begin}, size)) {
      return Ops.gatherV2(ctx, data, idx);
    }
  }

  /** One pass over the training set; the metrics receive the mean loss and the accuracy. */
  static void trainEpoch(CairnContext ctx, CompiledFunction step, Tensor x, Tensor y, long n, long epoch,
      Metric lossMean, Metric accuracy) {
    try (Tensor perm = epochPermutation(ctx, n, epoch)) {
      for (long b = 0; b < n; b += BATCH) {
        long size = Math.min(BATCH, n - b);
        try (Tensor xb = batchOf(ctx, x, perm, b, size);
            Tensor yb = batchOf(ctx, y, perm, b, size)) {
          Tensor[] outs = step.call(xb, yb); // loss, logits
          try {
            lossMean.update(outs[0]);
            accuracy.update(yb, outs[1]);
          } finally {
            for (Tensor t : outs) t.close();
          }
        }
      }
    }
  }

  /**
   * The training step as a compiled function (tf.function): inputs x [batch, 64] float32 and
   * labels [batch] int32; outputs the loss and the logits.
   */
  static CompiledFunction trainStep(CairnContext ctx, Sequential model, Optimizer optimizer) {
    return CompiledFunction.create(ctx, "train_step", 2, (c, in) -> {
      Tensor logits = null;
      Tensor loss = null;
      try (GradientTape tape = GradientTape.create(c)) {
        logits = model.call(in[0], true);
        loss = Loss.sparseCategoricalCrossentropy(c, in[1], logits, true);
        List<Variable> weights = model.trainableWeights();
        Tensor[] grads = new Tensor[0];
        try {
          grads = tape.gradient(loss, weights);
          optimizer.applyGradients(grads, weights);
        } finally {
          for (Tensor g : grads) if (g != null) g.close();
          for (Variable v : weights) v.close();
        }
        return new Tensor[] {loss, logits};
      } catch (RuntimeException e) {
        if (logits != null) logits.close();
        if (loss != null) loss.close();
        throw e;
      }
    });
  }

  static double testAccuracy(CairnContext ctx, Layer model, Tensor x, Tensor y) {
    try (Metric acc = Metric.accuracy(ctx, "test_accuracy");
        Tensor logits = model.call(x, false)) {
      acc.update(y, logits);
      return acc.result();
    }
  }

  /** Like C's printf("%.Nf"): the exact binary value rounded half to even. */
  static String fixed(double v, int digits) {
    if (Double.isNaN(v) || Double.isInfinite(v)) return String.valueOf(v).toLowerCase();
    return new BigDecimal(v).setScale(digits, RoundingMode.HALF_EVEN).toPlainString();
  }

  /** Line i is a test sample when i % 5 == 4, a training sample otherwise. */
  static Split[] loadDigits(Path path) throws IOException {
    List<String> lines = Files.readAllLines(path);
    List<float[]> xs = new ArrayList<>();
    List<Integer> ys = new ArrayList<>();
    for (String line : lines) {
      if (line.isBlank()) continue;
      String[] fields = line.trim().split(",");
      float[] pixels = new float[FEATURES];
      int label = -1;
      try {
        if (fields.length == FEATURES + 1) {
          for (int k = 0; k < FEATURES; ++k) pixels[k] = Integer.parseInt(fields[k].trim()) / 16.0f;
          label = Integer.parseInt(fields[FEATURES].trim());
        }
      } catch (NumberFormatException e) {
        label = -1;
      }
      if (label < 0 || label >= CLASSES) {
        System.err.printf("train_digits: %s: line %d is not 64 pixels and a label%n", path, xs.size() + 1);
        System.exit(1);
      }
      xs.add(pixels);
      ys.add(label);
    }
    int nTest = xs.size() / 5;
    int[] counts = {xs.size() - nTest, nTest};
    float[][] x = {new float[counts[0] * FEATURES], new float[counts[1] * FEATURES]};
    int[][] y = {new int[counts[0]], new int[counts[1]]};
    int[] filled = {0, 0};
    for (int i = 0; i < xs.size(); ++i) {
      int s = i % 5 == 4 ? 1 : 0;
      System.arraycopy(xs.get(i), 0, x[s], filled[s] * FEATURES, FEATURES);
      y[s][filled[s]++] = ys.get(i);
    }
    return new Split[] {new Split(x[0], y[0], counts[0]), new Split(x[1], y[1], counts[1])};
  }

  static long parseLong(String s) {
    try {
      return Long.parseLong(s.trim());
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  static String defaultDir() {
    String cache = System.getenv("XDG_CACHE_HOME");
    if (cache != null && !cache.isEmpty()) return cache + "/cairn/digits-java";
    String home = System.getenv("HOME");
    return (home != null ? home : ".") + "/.cache/cairn/digits-java";
  }
}
