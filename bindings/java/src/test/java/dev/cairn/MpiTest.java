package dev.cairn;

import static org.junit.jupiter.api.Assertions.*;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Mpi, MirroredStrategy.multiWorker and CheckpointManager.shard in one JVM without mpirun: bad
 * input, then without CAIRN_MPI_PLUGIN the missing plugin (UNAVAILABLE naming where it looked), or
 * with it a world of one process. Several ranks run under mpirun in tests/mpi/run.sh
 * (example/MultiWorker.java). One test: MPI starts once per process and cannot start again.
 */
class MpiTest {
  @Test
  void mpiInOneProcess(@TempDir Path dir) throws Exception {
    try (CairnContext ctx = new CairnContext(CairnContext.options().seed(1))) {
      CairnException e = assertThrows(CairnException.class, () -> Mpi.init(ctx, Duration.ZERO));
      assertEquals(Code.INVALID_ARGUMENT, e.code());
      assertTrue(e.getMessage().contains("Mpi.init: the timeout PT0S is below 1 ms"), e.getMessage());
      assertThrows(NullPointerException.class, () -> Mpi.init(null, Duration.ofSeconds(1)));
      assertThrows(NullPointerException.class, () -> MirroredStrategy.multiWorker(ctx, null, null));

      String plugin = System.getenv("CAIRN_MPI_PLUGIN");
      if (plugin == null || !new File(plugin).isFile()) {
        // libcairn.so was extracted without the plugin beside it, and the loader's path has none.
        e = assertThrows(CairnException.class, () -> Mpi.init(ctx, Duration.ofSeconds(1)));
        assertEquals(Code.UNAVAILABLE, e.code());
        assertTrue(e.getMessage().contains("cannot load the MPI plugin"), e.getMessage());
        return;
      }
      Mpi mpi = Mpi.init(ctx, Duration.ofSeconds(10));
      try {
        worldOfOne(ctx, mpi, dir);
      } finally {
        mpi.close();
      }
      mpi.close();
      e = assertThrows(CairnException.class, mpi::barrier);
      assertEquals(Code.FAILED_PRECONDITION, e.code());
      assertTrue(e.getMessage().contains("Mpi.barrier: mpi is closed"), e.getMessage());
    }
  }

  /** Each collective, the strategy and a sharded save on a communicator of one. */
  private static void worldOfOne(CairnContext ctx, Mpi mpi, Path dir) throws Exception {
    assertEquals(0, mpi.rank());
    assertEquals(1, mpi.size());
    assertEquals("Mpi(rank 0 of 1)", mpi.toString());
    try (Tensor value = Tensor.of(ctx, new float[] {1.5f, -2f}, 2)) {
      try (Tensor max = mpi.allReduce(Reduction.MAX, value); Tensor root = mpi.broadcast(0, value);
          Tensor all = mpi.allGather(value)) {
        for (Tensor t : new Tensor[] {max, root, all}) assertArrayEquals(new float[] {1.5f, -2f}, t.toFloatArray());
      }
      mpi.barrier();
      assertEquals(Code.INVALID_ARGUMENT, assertThrows(CairnException.class, () -> mpi.broadcast(1, value)).code());
    }
    try (MirroredStrategy s = MirroredStrategy.multiWorker(ctx, mpi, MirroredStrategy.multiWorkerOptions().checkReplicas(true))) {
      assertEquals(1, s.numReplicas());
    }

    String path;
    try (Tensor initial = Tensor.of(ctx, new float[] {1, 2, 3}, 3); Variable v = Variable.create(ctx, initial);
        Checkpoint ckpt = Checkpoint.create(ctx, "v", v);
        CheckpointManager manager = CheckpointManager.create(ckpt, dir.toString())) {
      manager.shard(mpi);
      path = manager.save();
      manager.shard(null);
    }
    try (Stream<Path> files = Files.list(dir)) {
      assertEquals(1, files.filter(f -> f.getFileName().toString().startsWith("ckpt-1.shard-0-of-1-")).count());
    }
    try (Tensor zeros = Tensor.of(ctx, new float[] {0, 0, 0}, 3); Variable restored = Variable.create(ctx, zeros);
        Checkpoint ckpt = Checkpoint.create(ctx, "v", restored)) {
      ckpt.restore(path).close();
      try (Tensor value = restored.read()) {
        assertArrayEquals(new float[] {1, 2, 3}, value.toFloatArray());
      }
    }
  }
}
