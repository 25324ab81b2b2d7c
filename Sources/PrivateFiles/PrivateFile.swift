import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Files that hold lists or secrets (replicas, server stores, backups, exports, the CLI's
/// config): created with mode 0600, exclusively, in directories made with mode 0700, and
/// replaced through a temporary file and a rename so no reader ever sees half of one. Kept
/// beside the SQLite wrapper because the client and the server both write such files.
public enum PrivateFile {
    /// A file or folder that could not be made private.
    public struct Failure: Error, CustomStringConvertible {
        /// The path it was about.
        public var path: String
        /// What went wrong, in words.
        public var reason: String
        public var description: String { "\(path): \(reason)" }
    }

    static func failure(_ path: String) -> Failure { Failure(path: path, reason: String(cString: strerror(errno))) }

    /// Creates `path`, empty, with mode 0600; fails when it exists (never follows a planted link).
    public static func createExclusively(_ path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw failure(path) }
        fchmod(fd, 0o600)  // whatever the umask
        close(fd)
    }

    /// Creates `path` with mode 0600 when it does not exist yet; an existing file of this user that
    /// others may read is made private too (files made before this rule).
    public static func prepare(_ path: String) throws {
        if (try? createExclusively(path)) != nil { return }
        var info = stat()
        guard lstat(path, &info) == 0 else { throw failure(path) }
        if info.st_uid == getuid() && (info.st_mode & 0o077) != 0 && (info.st_mode & S_IFMT) == S_IFREG {
            chmod(path, 0o600)
        }
    }

    /// Writes `bytes` to a new temporary file beside `path` (mode 0600), flushes it, and renames
    /// it over `path`: readers see the old contents or the new, never a mix.
    public static func replace(_ path: String, with bytes: [UInt8]) throws {
        let directory = (path as NSString).deletingLastPathComponent
        let temporary =
            (directory.isEmpty ? "." : directory) + "/.\((path as NSString).lastPathComponent).\(getpid()).tmp"
        unlink(temporary)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw failure(temporary) }
        fchmod(fd, 0o600)
        var written = 0
        while written < bytes.count {
            let n = bytes[written...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                let error = failure(temporary)
                close(fd)
                unlink(temporary)
                throw error
            }
            written += n
        }
        guard fsync(fd) == 0, close(fd) == 0 else {
            let error = failure(temporary)
            unlink(temporary)
            throw error
        }
        guard rename(temporary, path) == 0 else {
            let error = failure(path)
            unlink(temporary)
            throw error
        }
    }

    /// Creates the directory `path` and missing parents; the ones it creates get mode 0700.
    public static func makeDirectory(_ path: String) throws {
        try FileManager.default.createDirectory(
            atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }
}
