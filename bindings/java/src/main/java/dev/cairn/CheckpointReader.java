package dev.cairn;

import java.lang.ref.Reference;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads weights without the program that wrote them (tf.train.list_variables and load_variable,
 * safetensors' safe_open), in any of three formats ({@link #format()}): a Cairn checkpoint file; a
 * TensorFlow checkpoint (tensor_bundle V2: a prefix such as "dir/ckpt-5", its .index file, or a
 * directory whose {@code checkpoint} state file names the latest one; TF1 name-based checkpoints
 * too); safetensors (a .safetensors file, a sharded model's index .json, or a directory holding
 * model.safetensors.index.json or model.safetensors). The format is told from the bytes. Opening
 * verifies the header and index; loads verify checksums where the file keeps them. A reader may be
 * used from several threads at once.
 */
public final class CheckpointReader extends NativeHandle {
  private CheckpointReader(long handle) {
    super(handle, CairnNative::checkpointReaderFree);
  }

  /**
   * Opens {@code path} in any of the three formats: NOT_FOUND for a missing file, DATA_LOSS naming
   * the damaged part.
   *
   * @param path the file or checkpoint path
   * @return the new checkpoint reader, which the caller closes
   */
  public static CheckpointReader open(String path) {
    NativeLibrary.check();
    return new CheckpointReader(CairnNative.checkpointReaderOpen(NativeResources.cstr(path)));
  }

  /**
   * One key of a checkpoint: its dtype (STRING for the object graph and TensorFlow's string
   * tensors), the dtype as the file names it, and its shape.
   */
  public static final class Entry {
    private final String key;
    private final DType dtype;
    private final String typeName;
    private final long[] shape;

    Entry(String key, DType dtype, String typeName, long[] shape) {
      this.key = key;
      this.dtype = dtype;
      this.typeName = typeName;
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
     * The dtype a load returns; null for one this binding does not know, INVALID_DTYPE for one
     * Cairn lacks (uint16, complex128, safetensors' U32, ...: its loads fail naming the key).
     * safetensors' F8 types load as FLOAT32.
     *
     * @return the dtype; null for one this binding does not know
     */
    public DType dtype() {
      return dtype;
    }

    /**
     * The dtype as the file names it: "float32" for Cairn and TensorFlow, "F32", "F8_E4M3" for
     * safetensors (cairn_checkpoint_reader_type_name).
     *
     * @return the file's name of the dtype
     */
    public String typeName() {
      return typeName;
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
        out.add(new Entry(CairnNative.checkpointReaderKey(h, i), DType.fromValue(CairnNative.checkpointReaderDtype(h, i)),
            CairnNative.checkpointReaderTypeName(h, i), shape));
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
   * The bytes of a string entry (the serialized object graph; element 0 of a TensorFlow string
   * tensor).
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

  /**
   * Element {@code index} (row-major) of a string value: TensorFlow's string tensors, or a Cairn
   * file's object graph (one element). NOT_FOUND for an unknown key, INVALID_ARGUMENT for a value
   * that is not a string or an index past its elements, DATA_LOSS for a damaged value.
   *
   * @param key the key
   * @param index the element, row-major
   * @return the element's bytes
   */
  public byte[] loadStringElement(String key, long index) {
    byte[] k = NativeResources.cstr(key);
    long h = handle();
    try {
      return CairnNative.checkpointReaderLoadStringElement(h, k, index);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * The format of the file read: CAIRN, TF or SAFETENSORS.
   *
   * @return the format
   */
  public WeightsFormat format() {
    long h = handle();
    try {
      return WeightsFormat.fromValue(CairnNative.checkpointReaderFormat(h));
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * The dtype of key {@code i} as its file names it ("float32", "F32", "F8_E4M3"); see {@link
   * Entry#typeName()}.
   *
   * @param i the index of the key, as in {@link #keys()}
   * @return the name, or null when {@code i} is out of range
   */
  public String typeName(int i) {
    long h = handle();
    try {
      return CairnNative.checkpointReaderTypeName(h, i);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * Checks the stored checksum of {@code key} without keeping its value (loads check it too).
   * NOT_FOUND for an unknown key, DATA_LOSS naming the key when the bytes do not match.
   *
   * @param key the key
   * @return true when checked, false when the file keeps no checksum for the key (a safetensors
   *     tensor written without Cairn's opt-in checksum)
   */
  public boolean verify(String key) {
    byte[] k = NativeResources.cstr(key);
    long h = handle();
    try {
      return CairnNative.checkpointReaderVerify(h, k) != 0;
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * The metadata strings in key (byte) order: a safetensors file's "__metadata__" (the first
   * shard's for a sharded model), Cairn's checksum keys ("cairn.checksum.&lt;name&gt;") included;
   * empty for the other formats.
   *
   * @return the metadata, unmodifiable
   */
  public Map<String, String> metadata() {
    long h = handle();
    try {
      long n = CairnNative.checkpointReaderMetadataCount(h);
      Map<String, String> out = new LinkedHashMap<>();
      for (long i = 0; i < n; ++i) {
        out.put(CairnNative.checkpointReaderMetadataKey(h, i), CairnNative.checkpointReaderMetadataValue(h, i));
      }
      return Collections.unmodifiableMap(out);
    } finally {
      Reference.reachabilityFence(this);
    }
  }
}
