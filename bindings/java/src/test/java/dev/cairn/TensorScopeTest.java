package dev.cairn;

import static org.junit.jupiter.api.Assertions.*;

import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class TensorScopeTest {
  @Test
  void freesWhatItMadeExceptKept() {
    try (CairnContext ctx = new CairnContext();
        Tensor before = Tensor.of(ctx, new float[] {1, 2}, 2)) {
      Tensor made;
      Tensor kept;
      try (TensorScope s = TensorScope.open()) {
        made = Ops.add(ctx, before, before);
        kept = s.keep(Ops.mul(ctx, made, made));
        s.keep(before, null); // made outside: ignored
        assertEquals(1, s.size());
      }
      try (Tensor k = kept) {
        assertArrayEquals(new float[] {4, 16}, k.toFloatArray());
      }
      assertArrayEquals(new float[] {1, 2}, before.toFloatArray());
      assertTrue(made.isClosed());
      CairnException e = assertThrows(CairnException.class, made::toFloatArray);
      assertEquals(Code.FAILED_PRECONDITION, e.code());
      assertTrue(e.getMessage().contains("Tensor.toFloatArray: tensor is closed (freed by its TensorScope"), e.getMessage());
      e = assertThrows(CairnException.class, () -> Ops.neg(ctx, made));
      assertTrue(e.getMessage().contains("tensor is closed (freed by its TensorScope"), e.getMessage());
      made.close(); // closing again does nothing
    }
  }

  @Test
  void nestedScopesAndKeep() {
    try (CairnContext ctx = new CairnContext();
        Tensor x = Tensor.of(ctx, new float[] {3}, 1)) {
      Tensor tmp;
      Tensor innerKept;
      Tensor outerOnly;
      try (TensorScope outer = TensorScope.open()) {
        outerOnly = Ops.neg(ctx, x);
        try (TensorScope inner = TensorScope.open()) {
          tmp = Ops.mul(ctx, x, x);
          innerKept = inner.keep(Ops.add(ctx, tmp, x));
          assertEquals(1, inner.size());
        }
        assertTrue(tmp.isClosed());
        assertFalse(innerKept.isClosed());
        assertEquals(1, outer.size()); // kept escapes every scope
      }
      assertTrue(outerOnly.isClosed());
      try (Tensor k = innerKept) {
        assertArrayEquals(new float[] {12}, k.toFloatArray());
      }
    }
  }

  @Test
  void closingAnOuterScopeClosesInnerOnesLeftOpen() {
    try (CairnContext ctx = new CairnContext()) {
      TensorScope outer = TensorScope.open();
      Tensor a = Tensor.scalar(ctx, 1f);
      TensorScope.open(); // never closed itself
      Tensor b = Tensor.scalar(ctx, 2f);
      outer.close();
      assertTrue(a.isClosed() && b.isClosed());
      try (Tensor c = Tensor.scalar(ctx, 3f)) { // in no scope now
        assertEquals(3f, c.toFloatArray()[0]);
      }
      outer.close(); // twice: nothing
    }
  }

  @Test
  void aScopeBelongsToItsThread() throws Exception {
    try (CairnContext ctx = new CairnContext()) {
      TensorScope s = TensorScope.open();
      AtomicReference<Tensor> other = new AtomicReference<>();
      AtomicReference<Throwable> closeError = new AtomicReference<>();
      Thread t = new Thread(() -> {
        other.set(Tensor.scalar(ctx, 1));
        try {
          s.close();
        } catch (Throwable e) {
          closeError.set(e);
        }
      });
      t.start();
      t.join();
      assertEquals(0, s.size(), "a tensor made on another thread is in the scope");
      assertTrue(closeError.get() instanceof CairnException, String.valueOf(closeError.get()));
      assertTrue(closeError.get().getMessage().contains("TensorScope.close: the scope belongs to thread"),
          closeError.get().getMessage());
      Tensor mine = Tensor.scalar(ctx, 2);
      s.close();
      assertTrue(mine.isClosed());
      assertFalse(other.get().isClosed());
      other.get().close();
    }
  }

  // Counts of 4 MB tensors, give or take 1 MB: the backstop may free other tests' leftovers meanwhile.
  private static void assertLive(long base, long want) {
    long got = NativeMemory.liveBytes() - base;
    assertTrue(Math.abs(got - want) < (1 << 20), "live bytes " + got + ", want about " + want);
  }

  @Test
  void liveBytesFollowTensors() throws InterruptedException {
    int n = 1 << 20; // float32s: 4 MiB
    System.gc(); // let the backstop free other tests' leftovers first
    Thread.sleep(100);
    int percent = NativeMemory.setGcPercent(-1); // and start no collection meanwhile
    try (CairnContext ctx = new CairnContext()) {
      long base = NativeMemory.liveBytes();
      Tensor a = Tensor.of(ctx, new float[n], n);
      Tensor b = Ops.add(ctx, a, a);
      assertLive(base, 8L * n);
      b.close();
      assertLive(base, 4L * n);
      try (TensorScope s = TensorScope.open()) {
        Ops.neg(ctx, a);
        assertEquals(1, s.size());
        assertLive(base, 8L * n);
      }
      assertLive(base, 4L * n);
      a.close();
      assertLive(base, 0);
    } finally {
      NativeMemory.setGcPercent(percent);
    }
  }
}
