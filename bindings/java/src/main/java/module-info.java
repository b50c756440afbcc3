/**
 * Cairn, an embeddable ML runtime: tensors, ops, the object graph and checkpoints, training,
 * compiled functions and control flow, through the C library's JNI binding. Only {@code dev.cairn}
 * is exported; the native bridge inside it is package-private.
 */
module dev.cairn {
  exports dev.cairn;
}
