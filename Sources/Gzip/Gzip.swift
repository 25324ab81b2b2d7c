internal import CZlib

/// gzip through zlib: the server's compressed answers, and the snapshots of encrypted lists (BasketSeal).
public enum Gzip {
    /// The gzip encoding of `bytes`, or nil when zlib fails.
    public static func compress(_ bytes: [UInt8], level: Int32 = 6) -> [UInt8]? {
        var stream = z_stream()
        guard basket_deflate_init_gzip(&stream, level) == Z_OK else { return nil }
        defer { deflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, UInt(bytes.count))) + 32)
        let status = bytes.withUnsafeBufferPointer { input -> Int32 in
            output.withUnsafeMutableBufferPointer { out -> Int32 in
                stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
                stream.avail_in = UInt32(input.count)
                stream.next_out = out.baseAddress
                stream.avail_out = UInt32(out.count)
                return deflate(&stream, Z_FINISH)
            }
        }
        guard status == Z_STREAM_END else { return nil }
        output.removeSubrange(Int(stream.total_out)...)
        return output
    }

    /// Decodes gzip (or zlib) data; nil when it is not valid or larger than `limit`.
    public static func decompress(_ bytes: [UInt8], limit: Int = 64 << 20) -> [UInt8]? {
        var stream = z_stream()
        guard basket_inflate_init_auto(&stream) == Z_OK else { return nil }
        defer { inflateEnd(&stream) }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        return bytes.withUnsafeBufferPointer { input -> [UInt8]? in
            stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
            stream.avail_in = UInt32(input.count)
            while true {
                let status = chunk.withUnsafeMutableBufferPointer { out -> Int32 in
                    stream.next_out = out.baseAddress
                    stream.avail_out = UInt32(out.count)
                    return inflate(&stream, Z_NO_FLUSH)
                }
                let produced = chunk.count - Int(stream.avail_out)
                output.append(contentsOf: chunk[0..<produced])
                if output.count > limit { return nil }
                if status == Z_STREAM_END { return output }
                if status != Z_OK { return nil }
                if produced == 0 && stream.avail_in == 0 { return nil }
            }
        }
    }
}
