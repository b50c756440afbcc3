import dev.cairn.CairnContext;
import dev.cairn.Checkpoint;
import dev.cairn.CheckpointManager;
import dev.cairn.CompiledFunction;
import dev.cairn.DType;
import dev.cairn.Dataset;
import dev.cairn.DatasetIterator;
import dev.cairn.Element;
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
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.TreeMap;

/**
 * Cairn's training demo: an MLP (64 -> 64 relu -> 10) learns the UCI 8x8 handwritten digits.
 *
 * <p>The digits come through an input pipeline (CSV -> map -> shuffle -> batch -> repeat ->
 * prefetch) whose iterator is checkpointed with the model, the optimizer and the metrics every 20
 * steps by a checkpoint manager (3 kept). Kill it at any point and run it again: it resumes from
 * the latest checkpoint, mid-epoch too, and ends with the same weights, bit for bit, as a run
 * never interrupted (the last line is their checksum). --kill-after N simulates the crash after
 * step N. Training runs in a compiled function "train_step" (a gradient tape inside; traced once
 * per batch shape, then replayed). With --logdir it writes the epoch's loss and accuracy and the
 * graph of train_step for TensorBoard ({@code tensorboard --logdir DIR}). It follows
 * examples/TRAINING_DEMO.md and prints the same lines as examples/c/train_digits.c.
 *
 * <p>Run (from bindings/java): java -cp target/classes example/TrainDigits.java
 * [--data ../../examples/data/digits.csv] [--dir checkpoint_dir] [--epochs N] [--logdir DIR]
 * [--save-every N] [--kill-after N]
 */
public class TrainDigits {
  static final int FEATURES = 64;
  static final int CLASSES = 10;
  static final int HIDDEN = 64;
  static final int BATCH = 32;
  static final double LEARNING_RATE = 0.005;
  static final long SHUFFLE_SEED = 7;
  static final long CONTEXT_SEED = 1;

  /** The training pipeline (batched, repeated) and the test set, from the CSV file. */
  record Data(Dataset train, long nTrain, long nTest, long stepsPerEpoch, Tensor xTest, Tensor yTest)
      implements AutoCloseable {
    @Override
    public void close() {
      train.close();
      xTest.close();
      yTest.close();
    }
  }

  public static void main(String[] args) {
    String data = "examples/data/digits.csv";
    String dir = null;
    String logdir = null;
    long epochs = 20;
    long saveEvery = 20;
    long killAfter = 0;
    int a = 0;
    for (; a + 1 < args.length; a += 2) {
      if (args[a].equals("--data")) data = args[a + 1];
      else if (args[a].equals("--dir")) dir = args[a + 1];
      else if (args[a].equals("--epochs")) epochs = parseLong(args[a + 1]);
      else if (args[a].equals("--logdir")) logdir = args[a + 1];
      else if (args[a].equals("--save-every")) saveEvery = parseLong(args[a + 1]);
      else if (args[a].equals("--kill-after")) killAfter = parseLong(args[a + 1]);
      else break;
    }
    if (a < args.length || epochs < 1 || saveEvery < 1 || killAfter < 0) {
      System.err.println("usage: TrainDigits [--data digits.csv] [--dir checkpoint_dir] [--epochs N>=1] [--logdir DIR]"
          + " [--save-every N>=1] [--kill-after N]");
      System.exit(2);
    }
    if (dir == null) dir = defaultDir();

    try (CairnContext ctx = new CairnContext(CairnContext.options().seed(CONTEXT_SEED));
        Data d = buildPipelines(ctx, data)) {
      System.out.printf("digits: %d training and %d test samples of 8x8 pixels%n", d.nTrain(), d.nTest());
      run(ctx, d, dir, logdir, epochs, saveEvery, killAfter);
    }
  }

  // ---- The input pipeline (docs/data.md) ----

  /**
   * The map "prepare": 64 float32 pixel components and an int32 label in, x = pixels / 16 as a
   * float32[64] vector and the label out. Compiled: traced once, replayed on the pipeline's threads.
   */
  static Tensor[] prepare(CairnContext c, Element e) {
    Tensor[] pixels = new Tensor[FEATURES];
    for (int k = 0; k < FEATURES; ++k) pixels[k] = e.get(k);
    try (Tensor packed = Ops.pack(c, pixels); Tensor sixteenth = Tensor.scalar(c, 0.0625f)) {
      return new Tensor[] {Ops.mul(c, packed, sixteenth), e.get(FEATURES)}; // the map takes both
    }
  }

  static Data buildPipelines(CairnContext ctx, String path) {
    DType[] dtypes = new DType[FEATURES + 1];
    Arrays.fill(dtypes, DType.FLOAT32);
    dtypes[FEATURES] = DType.INT32;
    Dataset train = null;
    try (Dataset csv = Dataset.csv(ctx, List.of(path), Dataset.csvOptions(dtypes));
        Dataset samples = csv.map("prepare", TrainDigits::prepare, Dataset.mapOptions().outputs("x", "label"));
        Dataset test = samples.shard(5, 4)) { // line i is a test sample when i % 5 == 4
      train = samples.shard(5, 0);
      for (int k = 1; k < 4; ++k) {
        try (Dataset part = samples.shard(5, k)) {
          train = replace(train, train.concatenate(part));
        }
      }
      long nTrain = train.cardinality();
      long nTest = test.cardinality();
      train = replace(train, train.shuffle(nTrain, SHUFFLE_SEED, true));
      train = replace(train, train.batch(BATCH));
      long stepsPerEpoch = train.cardinality();
      train = replace(train, train.repeat(-1));
      train = replace(train, train.prefetch(2));
      try (Dataset testBatch = test.batch(nTest);
          DatasetIterator it = testBatch.iterate();
          Element e = it.getNext()) {
        Data d = new Data(train, nTrain, nTest, stepsPerEpoch, e.take("x"), e.take("label"));
        train = null;
        return d;
      }
    } finally {
      if (train != null) train.close();
    }
  }

  /** Closes the previous stage once the next one was built from it. */
  static Dataset replace(Dataset prev, Dataset next) {
    prev.close();
    return next;
  }

  // ---- Training ----

  static void run(CairnContext ctx, Data data, String dir, String logdir, long epochs, long saveEvery,
      long killAfter) {
    try (Sequential model = buildModel(ctx);
        Optimizer optimizer =
            Optimizer.create(ctx, Optimizer.options().kind(OptimizerKind.ADAM).learningRate(LEARNING_RATE));
        Metric lossMean = Metric.mean(ctx, "loss");
        Metric accuracy = Metric.accuracy(ctx, "accuracy");
        DatasetIterator iterator = data.train().iterate();
        Checkpoint ckpt = Checkpoint.create(ctx, new TreeMap<>(java.util.Map.of("accuracy", accuracy,
            "data", iterator, "loss", lossMean, "model", model, "optimizer", optimizer)));
        CheckpointManager manager =
            CheckpointManager.create(ckpt, dir, CheckpointManager.options().maxToKeep(3))) {
      String latest = manager.latest();
      if (latest != null) {
        // The optimizer's slots are restored when its next step creates them; with nothing left
        // to train they never are, which is expected here.
        try (RestoreStatus status = ckpt.restore(latest)) {
          status.expectPartial();
        }
        System.out.printf("resumed from %s after step %d%n", latest, iterator.position());
      }

      // Build the model on one sample (a restore above is applied as its variables appear).
      try (Tensor first = Ops.slice(ctx, data.xTest(), new long[] {0, 0}, 1, FEATURES);
          Tensor out = model.call(first, false)) {
        System.out.print(model.summary());
      }

      // Traced once per batch shape: full batches and the smaller last batch of an epoch.
      try (CompiledFunction stepFn = trainStep(ctx, model, optimizer);
          SummaryWriter writer = logdir == null ? null : SummaryWriter.create(logdir)) {
        boolean wroteGraph = false;
        long steps = data.stepsPerEpoch();
        long step = iterator.position();
        for (long epoch = step / steps; epoch < epochs; ++epoch) {
          long start = System.nanoTime();
          long trained = 0;
          long end = (epoch + 1) * steps;
          if (step % steps == 0) {
            lossMean.reset();
            accuracy.reset();
          }
          for (; step < end; ++step) {
            try (Element batch = iterator.getNext()) { // x, label
              Tensor[] outs = stepFn.call(batch.get("x"), batch.get("label")); // loss, logits
              try {
                lossMean.update(outs[0]);
                accuracy.update(batch.get("label"), outs[1]);
              } finally {
                for (Tensor t : outs) t.close();
              }
              trained += batch.get("label").shape()[0];
            }
            if (step + 1 == end || (step + 1) % saveEvery == 0) manager.save(step + 1);
            if (step + 1 == killAfter) Runtime.getRuntime().halt(3); // a crash: nothing is flushed or freed
          }
          double seconds = (System.nanoTime() - start) * 1e-9;
          double loss = lossMean.result();
          double acc = accuracy.result();
          if (writer != null) {
            // TensorBoard: the epoch's metrics, and once per run the graph of the traced step.
            writer.scalar("epoch_loss", loss, epoch + 1);
            writer.scalar("epoch_accuracy", acc, epoch + 1);
            if (!wroteGraph) writer.graph(stepFn, 0, 0);
            wroteGraph = true;
          }
          System.out.printf("epoch %2d/%d  loss %s  accuracy %s  %s examples/s%n", epoch + 1, epochs,
              fixed(loss, 4), fixed(acc, 4), fixed(trained / seconds, 0));
        }
      }
      System.out.println("test accuracy: " + fixed(testAccuracy(ctx, model, data.xTest(), data.yTest()), 4));
      System.out.printf("weights: %016x%n", weightsChecksum(model));
      iterator.stop();
    }
  }

  static Sequential buildModel(CairnContext ctx) {
    try (Layer hidden = Layers.dense(ctx, Layers.denseOptions(HIDDEN).activation("relu"));
        Layer logits = Layers.dense(ctx, CLASSES)) {
      return Sequential.of(ctx, "mlp", hidden, logits);
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

  /** FNV-1a 64 over the bytes of the model's trainable weights: equal weights, equal checksum. */
  static long weightsChecksum(Layer model) {
    long h = 0xcbf29ce484222325L;
    List<Variable> weights = model.trainableWeights();
    try {
      for (Variable v : weights) {
        try (Tensor t = v.read()) {
          ByteBuffer bytes = t.toByteBuffer(); // float32, native (little-endian) order
          while (bytes.hasRemaining()) h = (h ^ (bytes.get() & 0xff)) * 0x100000001b3L;
        }
      }
    } finally {
      weights.forEach(Variable::close);
    }
    return h;
  }

  /** Like C's printf("%.Nf"): the exact binary value rounded half to even. */
  static String fixed(double v, int digits) {
    if (Double.isNaN(v) || Double.isInfinite(v)) return String.valueOf(v).toLowerCase();
    return new BigDecimal(v).setScale(digits, RoundingMode.HALF_EVEN).toPlainString();
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
