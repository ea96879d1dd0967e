//! deepchess engine: network inference, searches and the UCI protocol (issue 3).
