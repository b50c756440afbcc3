package dev.cairn;

import java.lang.ref.Reference;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

/**
 * Reads a checkpoint file without the program that wrote it (tf.train.list_variables and
 * load_variable). Opening verifies its header, footer and index; loads verify checksums.
 */
public final class CheckpointReader extends NativeHandle {
  private CheckpointReader(long handle) {
    super(handle, CairnNative::checkpointReaderFree);
  }

  /**
   * Opens {@code path}: NOT_FOUND for a missing file, DATA_LOSS naming the damaged part.
   *
   * @param path the file or checkpoint path
   * @return the new checkpoint reader, which the caller closes
   */
  public static CheckpointReader open(String path) {
    NativeLibrary.check();
    return new CheckpointReader(CairnNative.checkpointReaderOpen(NativeResources.cstr(path)));
  }

  /** One key of a checkpoint: its dtype (STRING for the object graph) and shape. */
  public static final class Entry {
    private final String key;
    private final DType dtype;
    private final long[] shape;

    Entry(String key, DType dtype, long[] shape) {
      this.key = key;
      this.dtype = dtype;
      this.shape = shape;
    }

    /**
     * The key.
     *
     * @return the key, e.g. "model/w/.ATTRIBUTES/VARIABLE_VALUE"
     */
    public String key() {
      return key;
    }

    /**
     * The dtype; null for one this binding does not know.
     *
     * @return the dtype; null for one this binding does not know
     */
    public DType dtype() {
      return dtype;
    }

    /**
     * The dimensions (a copy).
     *
     * @return the dimensions (a copy)
     */
    public long[] shape() {
      return shape.clone();
    }

    /** E.g. "model/w/.ATTRIBUTES/VARIABLE_VALUE float32 [2,3]". */
    @Override
    public String toString() {
      return key + " " + (dtype == null ? "?" : dtype.cName()) + " " + Arrays.toString(shape).replace(" ", "");
    }
  }

  /**
   * The number of keys.
   *
   * @return the number of keys
   */
  public int size() {
    long h = handle();
    try {
      return (int) CairnNative.checkpointReaderCount(h);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * Every key with its dtype and shape, sorted by key (_CHECKPOINTABLE_OBJECT_GRAPH included).
   *
   * @return every key with its dtype and shape, sorted by key (_CHECKPOINTABLE_OBJECT_GRAPH included)
   */
  public List<Entry> entries() {
    long h = handle();
    try {
      long n = CairnNative.checkpointReaderCount(h);
      List<Entry> out = new ArrayList<>((int) n);
      for (long i = 0; i < n; ++i) {
        long[] shape = new long[(int) CairnNative.checkpointReaderRank(h, i)];
        for (int d = 0; d < shape.length; ++d) shape[d] = CairnNative.checkpointReaderDim(h, i, d);
        out.add(new Entry(
            CairnNative.checkpointReaderKey(h, i), DType.fromValue(CairnNative.checkpointReaderDtype(h, i)), shape));
      }
      return Collections.unmodifiableList(out);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * The keys, sorted.
   *
   * @return the keys, sorted
   */
  public List<String> keys() {
    long h = handle();
    try {
      long n = CairnNative.checkpointReaderCount(h);
      List<String> out = new ArrayList<>((int) n);
      for (long i = 0; i < n; ++i) out.add(CairnNative.checkpointReaderKey(h, i));
      return Collections.unmodifiableList(out);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * The value of {@code key} as a new tensor on {@code ctx}'s default device. NOT_FOUND for an
   * unknown key, DATA_LOSS for a damaged payload, INVALID_ARGUMENT for the string entry.
   *
   * @param ctx the context
   * @param key the key
   * @return a new tensor, which the caller closes
   */
  public Tensor load(CairnContext ctx, String key) {
    byte[] k = NativeResources.cstr(key);
    long h = handle();
    long c = ctx.handle();
    try {
      return new Tensor(CairnNative.checkpointReaderLoad(h, c, k));
    } finally {
      Reference.reachabilityFence(this);
      Reference.reachabilityFence(ctx);
    }
  }

  /**
   * The bytes of a string entry (the serialized object graph).
   *
   * @param key the key
   * @return the bytes of a string entry (the serialized object graph)
   */
  public byte[] loadString(String key) {
    byte[] k = NativeResources.cstr(key);
    long h = handle();
    try {
      return CairnNative.checkpointReaderLoadString(h, k);
    } finally {
      Reference.reachabilityFence(this);
    }
  }
}
