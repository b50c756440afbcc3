import dev.cairn.CairnContext;
import dev.cairn.Checkpoint;
import dev.cairn.CheckpointManager;
import dev.cairn.DType;
import dev.cairn.Dataset;
import dev.cairn.Element;
import dev.cairn.Layer;
import dev.cairn.Layers;
import dev.cairn.MirroredStrategy;
import dev.cairn.Model;
import dev.cairn.Mpi;
import dev.cairn.Ops;
import dev.cairn.Optimizer;
import dev.cairn.RestoreStatus;
import dev.cairn.Tensor;
import dev.cairn.Variable;
import dev.cairn.Verbose;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.stream.IntStream;

/**
 * The digits MLP trained on several processes under mpirun with a multi-worker strategy and
 * Model.fit, then saved as a sharded checkpoint: the Java version of
 * tests/mpi/multi_worker_digits.c (the same data pipeline, model and global batch of 32). Each rank
 * starts from its own random init (seed 1 + rank): the broadcast from rank 0 before the first step
 * makes the weights equal. Only rank 0 prints progress. Every rank prints
 * "rank R of N: accuracy A weights C"; rank 0 then prints "weights identical on N ranks" when the
 * all-gathered checksums agree (else the program fails), and "saved PATH" for the checkpoint. With
 * --restore, one process without MPI restores the newest checkpoint of DIR into a fresh model and
 * prints "restored: accuracy A". tests/mpi/run.sh runs it.
 *
 * <p>Run from the repository root with the jar (or bindings/java/target/classes) on the class path:
 * mpirun -np 2 java -cp cairn.jar bindings/java/example/MultiWorker.java --data digits.csv --epochs N --dir DIR;
 * java -cp cairn.jar bindings/java/example/MultiWorker.java --data digits.csv --restore DIR
 */
public class MultiWorker {
  static final long BATCH = 32, SHUFFLE_SEED = 7;
  static final double LEARNING_RATE = 0.003; // as examples/c/fit_digits.c

  public static void main(String[] args) throws Exception {
    String data = "examples/data/digits.csv", dir = null, restore = null;
    long epochs = 5;
    for (int a = 0; a + 1 < args.length; a += 2) {
      switch (args[a]) {
        case "--data" -> data = args[a + 1];
        case "--epochs" -> epochs = Long.parseLong(args[a + 1]);
        case "--dir" -> dir = args[a + 1];
        case "--restore" -> restore = args[a + 1];
        default -> throw new IllegalArgumentException("MultiWorker: unknown flag " + args[a]);
      }
    }
    if (restore != null) {
      restoreOne(data, restore);
    } else if (dir != null) {
      train(data, epochs, dir);
    } else {
      throw new IllegalArgumentException("usage: MultiWorker --data digits.csv --epochs N (--dir DIR | --restore DIR)");
    }
  }

  /** Runs on every rank: fit with the multi-worker strategy, the weights compared across the ranks, a sharded save. */
  static void train(String csv, long epochs, String dir) throws Exception {
    // The rank from mpirun's environment, before MPI starts: each rank's own seed.
    String worldRank = System.getenv("OMPI_COMM_WORLD_RANK");
    long seed = 1 + (worldRank == null ? 0 : Long.parseLong(worldRank));
    try (CairnContext ctx = new CairnContext(CairnContext.options().seed(seed));
        Mpi mpi = Mpi.init(ctx, Duration.ofMinutes(1));
        MirroredStrategy strategy = MirroredStrategy.multiWorker(ctx, mpi, MirroredStrategy.multiWorkerOptions().checkReplicas(true));
        Digits digits = new Digits(ctx, csv);
        Model model = strategy.scope(() -> mlp(ctx))) {
      model.fit(digits.train, Model.fitOptions().epochs(epochs).verbose(Verbose.EPOCH_LINES));
      double accuracy = model.evaluate(digits.test).get("accuracy");
      long mine = weightsChecksum(model);
      long[] all;
      try (Tensor t = Tensor.scalar(ctx, mine); Tensor gathered = mpi.allGather(t)) {
        all = gathered.toLongArray();
      }
      say(String.format("rank %d of %d: accuracy %.4f weights %016x", mpi.rank(), mpi.size(), accuracy, mine));
      for (int r = 0; r < all.length; ++r) {
        if (all[r] != mine) {
          throw new IllegalStateException(String.format("rank %d: weights differ: rank %d has %016x, this rank %016x",
              mpi.rank(), r, all[r], mine));
        }
      }
      try (Checkpoint ckpt = Checkpoint.create(ctx, "model", model); CheckpointManager manager = CheckpointManager.create(ckpt, dir)) {
        manager.shard(mpi);
        String path = manager.save();
        if (mpi.rank() == 0) {
          say(String.format("weights identical on %d ranks: %016x", mpi.size(), mine));
          say("saved " + path);
        }
      }
      // try-with-resources closes in reverse: the model (which keeps the strategy) and the strategy
      // release the communicator before mpi, the last user of Cairn's MPI_Init, finalizes MPI.
    }
  }

  /** Restores the newest checkpoint of dir into a fresh model in this one process (no MPI) and evaluates it. */
  static void restoreOne(String csv, String dir) {
    try (CairnContext ctx = new CairnContext(CairnContext.options().seed(1)); Digits digits = new Digits(ctx, csv);
        Model model = mlp(ctx); // restored before it is built: the values wait on it
        Checkpoint ckpt = Checkpoint.create(ctx, "model", model); CheckpointManager manager = CheckpointManager.create(ckpt, dir)) {
      if (manager.latest() == null) throw new IllegalStateException("MultiWorker: no checkpoint in " + dir);
      try (RestoreStatus status = ckpt.restore(manager.latest())) {
        status.expectPartial();
      }
      say(String.format("restored: accuracy %.4f", model.evaluate(digits.test).get("accuracy")));
    }
  }

  /**
   * examples/c/digits_data.c's pipelines: line i of the CSV is a test sample when i % 5 == 4; the
   * training part shuffled each pass and batched (global batches), the test part one batch.
   */
  static final class Digits implements AutoCloseable {
    final Dataset train, test;
    private final List<Dataset> stages = new java.util.ArrayList<>();

    Digits(CairnContext ctx, String csv) {
      DType[] columns = IntStream.range(0, 65).mapToObj(i -> i < 64 ? DType.FLOAT32 : DType.INT32).toArray(DType[]::new);
      Dataset rows = keep(Dataset.csv(ctx, List.of(csv), Dataset.csvOptions(columns)));
      Dataset samples = keep(rows.map("prepare", MultiWorker::prepare, Dataset.mapOptions().outputs("x", "label")));
      Dataset part = keep(samples.shard(5, 0));
      for (long k = 1; k < 4; ++k) part = keep(part.concatenate(keep(samples.shard(5, k))));
      train = keep(keep(part.shuffle(part.cardinality(), SHUFFLE_SEED, true)).batch(BATCH, false));
      Dataset held = keep(samples.shard(5, 4));
      test = keep(held.batch(held.cardinality(), false));
    }

    private Dataset keep(Dataset d) {
      stages.add(d);
      return d;
    }

    @Override
    public void close() {
      stages.forEach(Dataset::close);
    }
  }

  /** Prints one line in one write, so that mpirun's --tag-output keeps it whole. */
  static void say(String line) {
    System.out.print(line + System.lineSeparator());
    System.out.flush();
  }

  /** A CSV row (64 pixels 0..16, a label) as x = pixels / 16 (float32[64]) and the label. */
  static Tensor[] prepare(CairnContext c, Element row) {
    Tensor[] pixels = IntStream.range(0, 64).mapToObj(row::get).toArray(Tensor[]::new);
    return new Tensor[] {Ops.mul(c, Ops.pack(c, pixels), Tensor.scalar(c, 1f / 16)), row.get(64)};
  }

  /** Dense(64, relu) -> Dense(10) logits, compiled with Adam, sparse crossentropy and accuracy. */
  static Model mlp(CairnContext ctx) {
    try (Layer hidden = Layers.dense(ctx, Layers.denseOptions(64).activation("relu"));
        Layer logits = Layers.dense(ctx, 10); Optimizer adam = Optimizer.adam(ctx, LEARNING_RATE)) {
      return Model.of(ctx, hidden, logits).compile(adam, "sparse_categorical_crossentropy", "accuracy");
    }
  }

  /**
   * FNV-1a 64 over the bytes of the model's trainable weights (as digits_weights_checksum in
   * examples/c/digits_data.c): equal weights, equal checksum.
   */
  static long weightsChecksum(Model model) {
    long h = 0xcbf29ce484222325L;
    for (Variable v : model.trainableWeights()) {
      try (Tensor t = v.read()) {
        ByteBuffer bytes = t.toByteBuffer();
        while (bytes.hasRemaining()) h = (h ^ (bytes.get() & 0xff)) * 0x100000001b3L;
      }
    }
    return h;
  }
}
