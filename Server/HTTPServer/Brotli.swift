internal import CBrotli

/// Brotli (RFC 7932) through libbrotli.
public enum Brotli {
    /// The brotli encoding of `bytes` at `quality` (0–11; 11, the best, takes about 2 ms per KB),
    /// or nil when the encoder fails.
    public static func compress(_ bytes: [UInt8], quality: Int32 = 11) -> [UInt8]? {
        var size = BrotliEncoderMaxCompressedSize(bytes.count)
        guard size > 0 else { return nil }
        var output = [UInt8](repeating: 0, count: size)
        let ok = bytes.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { out in
                BrotliEncoderCompress(
                    quality, BROTLI_DEFAULT_WINDOW, BROTLI_MODE_TEXT, input.count, input.baseAddress, &size,
                    out.baseAddress)
            }
        }
        guard ok == BROTLI_TRUE else { return nil }
        output.removeSubrange(size...)
        return output
    }

    /// Decodes brotli data; nil when it is not valid or decodes to more than `limit` bytes.
    public static func decompress(_ bytes: [UInt8], limit: Int = 64 << 20) -> [UInt8]? {
        guard let state = BrotliDecoderCreateInstance(nil, nil, nil) else { return nil }
        defer { BrotliDecoderDestroyInstance(state) }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        return bytes.withUnsafeBufferPointer { input -> [UInt8]? in
            var availableIn = input.count
            var nextIn = input.baseAddress
            while true {
                var availableOut = chunk.count
                let result = chunk.withUnsafeMutableBufferPointer { out -> BrotliDecoderResult in
                    var nextOut = out.baseAddress
                    return BrotliDecoderDecompressStream(state, &availableIn, &nextIn, &availableOut, &nextOut, nil)
                }
                output.append(contentsOf: chunk[0..<(chunk.count - availableOut)])
                if output.count > limit { return nil }
                switch result {
                case BROTLI_DECODER_RESULT_SUCCESS: return output
                case BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT: continue
                default: return nil  // an error, or input ended before the stream did
                }
            }
        }
    }
}
