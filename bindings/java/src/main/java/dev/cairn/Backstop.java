package dev.cairn;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.ref.PhantomReference;
import java.lang.ref.ReferenceQueue;
import java.util.ArrayList;
import java.util.function.LongConsumer;

/**
 * The backstop behind {@link NativeHandle#close()}: frees a handle whose owner was garbage
 * collected without close(). What java.lang.ref.Cleaner does, for less per handle (issue 20):
 * one object per handle (a {@link Ref}, which is also the release action), no lock and no
 * Reference.clear() (a JNI call in JDK 17) on the create-and-close path.
 *
 * <p>A Ref must stay strongly reachable until its owner is closed or collected. Each thread keeps
 * the Refs it made in its own {@link Chunk}, an array only that thread changes, so registering
 * is an array store; when the array fills, the thread drops the Refs that are done (closed,
 * taken or freed here; any thread may mark one done) and grows or shrinks the array to twice
 * what is left. Every chunk is also in {@link #CHUNKS}, so a thread's Refs outlive the thread;
 * a new chunk compacts the chunks of threads that ended and drops the empty ones.
 *
 * <p>A done Ref may still be reached when its owner dies (until its thread's next compaction):
 * the GC then enqueues it and the daemon thread finds it done and frees nothing. Exactly one of
 * close, take and the daemon wins a Ref's state (a compare-and-set), so a handle is freed once.
 */
final class Backstop {
  private static final ReferenceQueue<Object> QUEUE = new ReferenceQueue<>();
  private static final ArrayList<Chunk> CHUNKS = new ArrayList<>(); // guarded by itself
  private static final ThreadLocal<Chunk> CHUNK = ThreadLocal.withInitial(Backstop::newChunk);
  private static final int MIN_CAPACITY = 256;

  static {
    Thread t = new Thread(Backstop::drain, "cairn-backstop");
    t.setDaemon(true);
    t.start();
  }

  private Backstop() {}

  /** The release of one owned handle: registered for its owner, taken once by whoever wins. */
  static final class Ref extends PhantomReference<Object> {
    private static final VarHandle DONE;

    static {
      try {
        DONE = MethodHandles.lookup().findVarHandle(Ref.class, "done", boolean.class);
      } catch (ReflectiveOperationException e) {
        throw new ExceptionInInitializerError(e);
      }
    }

    private final long handle;
    private final LongConsumer free;
    private final long nativeBytes; // counted in NativeMemory until released or taken
    private volatile boolean done;

    private Ref(Object owner, long handle, LongConsumer free, long nativeBytes) {
      super(owner, QUEUE);
      this.handle = handle;
      this.free = free;
      this.nativeBytes = nativeBytes;
    }

    long nativeBytes() {
      return nativeBytes;
    }

    /** Marks this done; true for the one caller that did (which then frees or hands on the handle). */
    boolean take() {
      return !done && DONE.compareAndSet(this, false, true);
    }

    /** Frees the handle if nobody took it yet; true when this call freed it. */
    boolean release() {
      if (!take()) return false;
      free.accept(handle);
      return true;
    }

    boolean isDone() {
      return done;
    }
  }

  // One thread's registered Refs; only its thread changes it (or, once it ended, newChunk).
  private static final class Chunk {
    final Thread owner = Thread.currentThread();
    Ref[] refs = new Ref[MIN_CAPACITY];
    int n;

    void add(Ref r) {
      if (n == refs.length) compact();
      refs[n++] = r;
    }

    // Drops the done Refs; resizes to twice what is left (at least MIN_CAPACITY).
    void compact() {
      int kept = 0;
      for (int i = 0; i < n; ++i) {
        Ref r = refs[i];
        if (!r.isDone()) refs[kept++] = r; // written before slot i is cleared: always reachable
      }
      for (int i = kept; i < n; ++i) refs[i] = null;
      n = kept;
      int capacity = Math.max(MIN_CAPACITY, 2 * kept);
      if (capacity != refs.length) {
        Ref[] next = new Ref[capacity];
        System.arraycopy(refs, 0, next, 0, kept);
        refs = next;
      }
    }
  }

  private static Chunk newChunk() {
    Chunk c = new Chunk();
    synchronized (CHUNKS) {
      // Threads that ended: their chunks are no one's now (Thread.isAlive() false means their
      // writes are visible here).
      CHUNKS.removeIf(old -> {
        if (old.owner.isAlive()) return false;
        old.compact();
        return old.n == 0;
      });
      CHUNKS.add(c);
    }
    return c;
  }

  /**
   * Registers {@code handle}, which {@code free} releases, to be freed once {@code owner} is
   * collected; it holds {@code nativeBytes} of data (0 when not counted).
   */
  static Ref register(Object owner, long handle, LongConsumer free, long nativeBytes) {
    Ref r = new Ref(owner, handle, free, nativeBytes);
    CHUNK.get().add(r);
    return r;
  }

  // The daemon: frees what the GC found unreachable and nobody closed.
  private static void drain() {
    while (true) {
      try {
        Ref r = (Ref) QUEUE.remove();
        if (r.release()) NativeHandle.released(r);
      } catch (InterruptedException e) {
        // keep going: a daemon thread ends with the JVM
      } catch (Throwable t) {
        // a free function that threw: the handle is lost, the backstop must go on
      }
    }
  }
}
