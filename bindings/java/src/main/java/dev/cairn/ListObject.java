package dev.cairn;

import java.lang.ref.Reference;
import java.util.Objects;

/**
 * A list (TensorFlow's ListWrapper): its elements are tracked edges named "0", "1", ... by index.
 * Checkpoints restore into elements as they are appended; TensorFlow refuses to checkpoint a list
 * whose elements were replaced or deleted.
 */
public final class ListObject extends CairnObject {
  ListObject(long handle) {
    super(handle);
  }

  /**
   * A new, empty list.
   *
   * @param ctx the context
   * @return a new, empty list
   */
  public static ListObject create(CairnContext ctx) {
    long c = ctx.handle();
    try {
      return new ListObject(CairnNative.listCreate(c));
    } finally {
      Reference.reachabilityFence(ctx);
    }
  }

  /**
   * Appends {@code item} (the list takes its own reference). A checkpoint value waiting for the
   * new index is restored into it before this returns.
   *
   * @param item the object to store
   */
  public void append(CairnObject item) {
    Objects.requireNonNull(item, "item");
    long h = handle();
    long i = item.handle();
    try {
      CairnNative.listAppend(h, i);
    } finally {
      Reference.reachabilityFence(this);
      Reference.reachabilityFence(item);
    }
  }

  /**
   * The number of elements.
   *
   * @return the number of elements
   */
  public long size() {
    long h = handle();
    try {
      return CairnNative.listSize(h);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * Element {@code index} as a new handle the caller closes; OUT_OF_RANGE for index >= size.
   *
   * @param index the zero-based index
   * @return the element, a new handle the caller closes
   */
  public CairnObject get(long index) {
    if (index < 0) throw new IndexOutOfBoundsException("index " + index);
    long h = handle();
    long item;
    try {
      item = CairnNative.listGet(h, index);
    } finally {
      Reference.reachabilityFence(this);
    }
    return wrap(item);
  }

  /**
   * {@link #get(long)} as a {@code type}; throws ClassCastException for another kind.
   *
   * @param index the zero-based index
   * @param <T> the class of the object
   * @param type the class to return
   * @return the element, a new handle the caller closes
   */
  public <T extends CairnObject> T get(long index, Class<T> type) {
    Objects.requireNonNull(type, "type");
    if (index < 0) throw new IndexOutOfBoundsException("index " + index);
    long h = handle();
    long item;
    try {
      item = CairnNative.listGet(h, index);
    } finally {
      Reference.reachabilityFence(this);
    }
    return wrap(item, type, "element " + index);
  }

  /**
   * Replaces element {@code index} (&lt; size) with {@code item}.
   *
   * @param index the zero-based index
   * @param item the object to store
   */
  public void set(long index, CairnObject item) {
    Objects.requireNonNull(item, "item");
    if (index < 0) throw new IndexOutOfBoundsException("index " + index);
    long h = handle();
    long i = item.handle();
    try {
      CairnNative.listSet(h, index, i);
    } finally {
      Reference.reachabilityFence(this);
      Reference.reachabilityFence(item);
    }
  }

  @Override
  String describe() {
    return "size " + size();
  }
}
