// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title JsonWriter
/// @notice Builds JSON text on-chain. Strings are escaped per RFC 8259, so whatever an owner stores
///         (quotes, backslashes, control characters) still yields a document that parses.
library JsonWriter {
    bytes16 private constant HEX = "0123456789abcdef";

    /// @notice A JSON string literal, quotes included.
    function str(string memory value) internal pure returns (string memory) {
        bytes memory raw = bytes(value);
        uint256 extra;
        for (uint256 i; i < raw.length; ++i) {
            bytes1 c = raw[i];
            if (c == '"' || c == "\\" || c == 0x08 || c == 0x0c || c == "\n" || c == "\r" || c == "\t") {
                extra += 1;
            } else if (uint8(c) < 0x20) {
                extra += 5;
            }
        }
        bytes memory out = new bytes(raw.length + extra + 2);
        uint256 j;
        out[j++] = '"';
        for (uint256 i; i < raw.length; ++i) {
            bytes1 c = raw[i];
            if (c == '"' || c == "\\") {
                out[j++] = "\\";
                out[j++] = c;
            } else if (c == "\n") {
                out[j++] = "\\";
                out[j++] = "n";
            } else if (c == "\r") {
                out[j++] = "\\";
                out[j++] = "r";
            } else if (c == "\t") {
                out[j++] = "\\";
                out[j++] = "t";
            } else if (c == 0x08) {
                out[j++] = "\\";
                out[j++] = "b";
            } else if (c == 0x0c) {
                out[j++] = "\\";
                out[j++] = "f";
            } else if (uint8(c) < 0x20) {
                out[j++] = "\\";
                out[j++] = "u";
                out[j++] = "0";
                out[j++] = "0";
                out[j++] = HEX[uint8(c) >> 4];
                out[j++] = HEX[uint8(c) & 0x0f];
            } else {
                out[j++] = c;
            }
        }
        out[j] = '"';
        return string(out);
    }

    /// @notice A JSON array of string literals.
    function strArray(string[] memory values) internal pure returns (string memory out) {
        out = "[";
        for (uint256 i; i < values.length; ++i) {
            out = string.concat(out, i == 0 ? "" : ",", str(values[i]));
        }
        out = string.concat(out, "]");
    }

    /// @notice `"key":` followed by an already-encoded JSON value.
    function member(string memory key, string memory encodedValue) internal pure returns (string memory) {
        return string.concat(str(key), ":", encodedValue);
    }

    /// @notice The JSON literal for a boolean.
    function boolean(bool value) internal pure returns (string memory) {
        return value ? "true" : "false";
    }
}
