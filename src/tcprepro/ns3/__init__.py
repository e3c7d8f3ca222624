"""ns-3 backend: C++ sources in ``cpp/``, their build (``build``) and the runner (``backend``)."""
