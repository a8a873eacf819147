"""The texts of the TensorList ops' errors, written out for the reference model (:mod:`tests.helpers.list_reference`).

TensorFlow 2.21's texts, as its list kernels format them (the oracle tests check numba_ta's
against ``tf.raw_ops``); the ``NT-`` codes are numba_ta's own texts where TensorFlow crashes or
corrupts the list (``docs/semantics.rst``, section "TensorList ops", its crash cases).  They are
written here, not taken from numba_ta's message table (``numba_ta.tf.messages``), so that the
list state machine and fuzz tests hold the package's texts to an expectation of their own: a
changed text in the package fails them.

``TEXTS`` maps a message code of the semantics page to ``(error class name, template)``; the
fields are filled in as ``str.format`` fills them.
"""

TEXTS = {
    "L1": ("InvalidArgumentError", "Input list must be a scalar saw: {shape}"),
    "L2": ("InvalidArgumentError", "Input handle is not a list. Saw: '{value}'"),
    "L3": ("InvalidArgumentError", "Invalid data types; op elements {op_dtype} but list elements {list_dtype}"),
    "L4": ("InvalidArgumentError", "The only valid scalar shape tensor is the fully unknown shape specified as -1."),
    "L5": ("InvalidArgumentError", "Shape must be at most rank 1 but is rank {rank}"),
    "L6": ("InvalidArgumentError", "Dimension {dim} must be >= -1"),
    "L7": ("InvalidArgumentError", "max_num_elements expected to be a scalar but got shape: {shape}"),
    "L8": ("InvalidArgumentError", "The num_elements to reserve must be a tensor size 1, but got {shape}"),
    "L9": ("InvalidArgumentError", "The num_elements to reserve must be a non negative number, but got {num_elements}"),
    "L10": ("InvalidArgumentError", "Tensor must be at least a vector, but saw shape: {shape}"),
    "L11": ("InvalidArgumentError", "Specified a list with shape {element_shape} from a tensor with shape {shape}"),
    "L12": ("InvalidArgumentError", "{op}: element_shape must be at most rank 1 but has the shape of {shape}"),
    "L13": ("InvalidArgumentError", "Trying to access element {index} in a list with {size} elements."),
    "L14": (
        "InvalidArgumentError",
        (
            "Trying to read an uninitialized tensor but element_shape is not fully defined: {element_shape} and no "
            "list element is set."
        ),
    ),
    "L15": ("InvalidArgumentError", "Trying to modify element {index} in a list with {size} elements."),
    "L16": (
        "InvalidArgumentError",
        (
            "Tried to set a tensor with incompatible shape at a list index. Item element shape: {shape} list shape: "
            "{element_shape}"
        ),
    ),
    "L17": (
        "InvalidArgumentError",
        ("Expected argument 1 to be a scalar. ReceivedTensor<type: int32 shape: {shape} values: {values}>"),
    ),
    "L18": (
        "InvalidArgumentError",
        (
            "Tried to append a tensor with incompatible shape to a list. Op element shape: {shape} list shape: "
            "{element_shape}"
        ),
    ),
    "L19": (
        "InvalidArgumentError",
        ("Tried to push item into a full list list size: {size} max_num_elements: {max_num_elements}"),
    ),
    "L20": ("InvalidArgumentError", "Trying to pop from an empty list."),
    "L21": (
        "InvalidArgumentError",
        ("Trying to read an uninitialized tensor but element_shape is not fully defined.{element_shape}"),
    ),
    "L22": ("InvalidArgumentError", "Expected tensor to be at least a vector, but saw shape: {shape}"),
    "L23": ("InvalidArgumentError", "Expected input_handles to be a vector, but saw shape: {shape}"),
    "L24": ("InvalidArgumentError", "Expected tensor.shape[0] == input_handles.size, but saw {rows} vs. {size}"),
    "L25": ("InvalidArgumentError", "Input handle at index {index} is not a list. Saw: '{value}'"),
    "L26": (
        "InvalidArgumentError",
        (
            "Tried to append a tensor with incompatible shape to a list at index {index}. Op element shape: {shape} "
            "list shape: {element_shape}"
        ),
    ),
    "L27": (
        "InvalidArgumentError",
        ("Invalid data type at index {index}; op elements {op_dtype} but list elements {list_dtype}"),
    ),
    "L28": (
        "InvalidArgumentError",
        ("Operation expected a list with {num_elements} elements but got a list with {size} elements."),
    ),
    "L29": (
        "InvalidArgumentError",
        ("Tried to stack elements of an empty list with non-fully-defined element_shape: {element_shape}"),
    ),
    "L30": (
        "InvalidArgumentError",
        (
            "Tried to stack list which only contains uninitialized tensors and has a non-fully-defined "
            "element_shape: {element_shape}"
        ),
    ),
    "L31": (
        "InvalidArgumentError",
        ("Tried to gather 0-elements from a list with non-fully-defined shape: {element_shape}"),
    ),
    "L32": ("InvalidArgumentError", "Trying to gather element {index} in a list with {size} elements."),
    "L33": ("InvalidArgumentError", "Index {index} out o range; list only has {size} elements."),
    "L34": (
        "InvalidArgumentError",
        ("Tried to gather uninitialized tensors from a list with non-fully-defined element_shape: {element_shape}"),
    ),
    "L35": ("InvalidArgumentError", "Invalid number of rows in input tensor. Expected: {indices} Actual: {rows}"),
    "L36": ("InvalidArgumentError", "Indices in TensorListScatter must all be non-negative."),
    "L37": ("InvalidArgumentError", "TensorListScatter: Trying to scatter at index {index} in list with size {size}"),
    "L38": ("InvalidArgumentError", "TensorListScatter expects num_elements >= -1, found: {num_elements}"),
    "L39": ("InvalidArgumentError", "num_elements must be a scalar"),
    "L40": (
        "InvalidArgumentError",
        ("Invalid data types; input tensor type: {tensor_dtype} list element_type: {list_dtype}"),
    ),
    "L41": ("InvalidArgumentError", "Expected len(indices) == tensor.shape[0], but saw: {indices} vs. {rows}"),
    "L42": ("InvalidArgumentError", "Concat requires elements to be at least vectors, found scalars instead."),
    "L43": (
        "InvalidArgumentError",
        (
            "All except the first dimension must be fully defined when concating an empty tensor list. "
            "element_shape: {element_shape}"
        ),
    ),
    "L44": ("InvalidArgumentError", "Concat saw a scalar shape at index {index} but requires at least vectors."),
    "L45": (
        "InvalidArgumentError",
        (
            "First entry of element_shape input does not match the first dim of list element at index: {index} "
            "Expected: {expected} Actual: {actual}"
        ),
    ),
    "L46": (
        "InvalidArgumentError",
        (
            "Trying to concat list with only uninitialized tensors but element_shape_except_first_dim is not fully "
            "defined: {element_shape}"
        ),
    ),
    "L47": (
        "InvalidArgumentError",
        (
            "Concating lists with uninitialized tensors is not supported in this version of TensorListConcat. "
            "Consider updating your GraphDef to run the newer version."
        ),
    ),
    "L48": (
        "InvalidArgumentError",
        ("List contains uninitialized tensor at index {index} but leading_dims has only {leading} elements."),
    ),
    "L49": ("InvalidArgumentError", "Incompatible input TensorList tensor shapes: {shape} vs. {other_shape}"),
    "L50": ("InvalidArgumentError", "input_{input} is not a TensorList at index {index}.  Saw: '{value}'"),
    "L51": (
        "InvalidArgumentError",
        ("input_{input}[{index}].dtype != element_dtype.  Saw: {list_dtype} vs. {element_dtype}"),
    ),
    "L52": (
        "InvalidArgumentError",
        (
            "input_a and input_b TensorList element shapes are not identical at index {index}.  Saw {element_shape} "
            "vs. {other_shape}"
        ),
    ),
    "L53": (
        "InvalidArgumentError",
        ("TensorListSplit requires element_shape to be at least of rank 1, but saw: {element_shape}"),
    ),
    "L54": ("InvalidArgumentError", "tensor shape {shape} is not compatible with element_shape {element_shape}"),
    "L55": ("InvalidArgumentError", "Invalid value in lengths: {length}"),
    "L56": ("InvalidArgumentError", "Attempting to slice [{start}, {end}] from tensor with length {rows}"),
    "L57": ("InvalidArgumentError", "Unused values in tensor. Length of tensor: {rows} Values used: {used}"),
    "L58": ("InvalidArgumentError", "size must be a scalar"),
    "L59": ("InvalidArgumentError", "TensorListSlice expects size to be non-negative. Got: {size}"),
    "L60": ("InvalidArgumentError", "ZerosLike non-scalar Tensor with dtype=DT_VARIANT is not supported."),
    "L62": (
        "InvalidArgumentError",
        ("AddN of non-scalar Tensor with dtype=DT_VARIANT is not supported; inputs[{index} has shape: {shape}."),
    ),
    "L63": (
        "InvalidArgumentError",
        ("Trying to add two lists of tensors of different dtypes. One is {dtype} and the other is {other_dtype}"),
    ),
    "L64": (
        "InvalidArgumentError",
        (
            "Trying to add two lists of tensors with incompatible element shapes. One is {element_shape} and the "
            "other is {other_shape}"
        ),
    ),
    "L65": (
        "InvalidArgumentError",
        ("Trying to add two lists of tensors with different lengths. One is {size} and the other is {other_size}"),
    ),
    "L66": (
        "InvalidArgumentError",
        ("Trying to add two tensors with incompatible element shapes. One is {shape} and the other is {other_shape}"),
    ),
    "L67": ("InvalidArgumentError", "Trying to add unsupported dtype {enum}"),
    "L68": (
        "InternalError",
        (
            "BinaryOpVariants: Variants a and b have different type ids.  Type names: '{type_name}' vs. "
            "'{other_type_name}'"
        ),
    ),
    "L69": ("InvalidArgumentError", "element_shape must not be empty"),
    "G2": ("InvalidArgumentError", "Expected indices to be a vector, but received shape: {shape}"),
    "NT-merge-rank": (
        "InvalidArgumentError",
        ("PartialTensorShape: Incompatible ranks during merge: {rank} vs. {other_rank}"),
    ),
    "NT-merge-shape": (
        "InvalidArgumentError",
        ("PartialTensorShape: Incompatible shapes during merge: {shape} vs. {other_shape}"),
    ),
    "NT-tl-add-shape": (
        "InvalidArgumentError",
        (
            "Trying to add two lists of tensors whose element {index} of shape {shape} is not compatible with their "
            "merged element shape {element_shape} (TensorFlow corrupts the list here)."
        ),
    ),
    "NT-tl-index": (
        "InvalidArgumentError",
        ("TensorListGetItem: index must hold exactly one value, but had shape: {shape} (TensorFlow aborts here)."),
    ),
    "NT-tl-leading-negative": (
        "InvalidArgumentError",
        ("Invalid value in leading_dims: {value} (TensorFlow aborts or returns a wrong result here)."),
    ),
    "NT-tl-leading-vector": (
        "InvalidArgumentError",
        ("Expected leading_dims to be a vector, received shape: {shape} (TensorFlow aborts here)."),
    ),
    "NT-tl-scatter-negative": (
        "InvalidArgumentError",
        ("Indices in TensorListScatterIntoExistingList must all be non-negative (TensorFlow crashes here)."),
    ),
    "NT-tl-scatter-shape": (
        "InvalidArgumentError",
        (
            "Tried to scatter a tensor with incompatible shape into a list at index {index}. Item element shape: "
            "{shape} list shape: {element_shape} (TensorFlow corrupts the list here)."
        ),
    ),
    "NT-tl-split-shape": (
        "InvalidArgumentError",
        (
            "tensor shape {shape} of piece {index} is not compatible with element_shape {element_shape} (TensorFlow "
            "corrupts the list here)."
        ),
    ),
    "P1": ("InvalidArgumentError", "Expected lengths to be a vector, received shape: {shape}"),
}


def text(code, **fields):
    """Return ``(error class name, text)`` of the message ``code`` with its ``fields`` filled in."""
    cls, template = TEXTS[code]
    return cls, template.format(**fields)
