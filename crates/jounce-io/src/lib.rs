//! jounce-io (skeleton)
