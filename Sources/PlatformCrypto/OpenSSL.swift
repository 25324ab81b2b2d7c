#if canImport(CCrypto)
    internal import CCrypto
    import Foundation

    /// The seam's functions on libcrypto (OpenSSL 3's EVP interfaces): Linux.
    enum Platform {
        static func randomBytes(_ count: Int) -> [UInt8] {
            var bytes = [UInt8](repeating: 0, count: count)
            guard count > 0 else { return bytes }
            let ok = bytes.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32(count)) }
            precondition(ok == 1, "RAND_bytes failed")
            return bytes
        }

        static func sha256(_ bytes: [UInt8]) -> [UInt8] {
            var digest = [UInt8](repeating: 0, count: 32)
            let ok = bytes.withUnsafeBufferPointer { input in
                digest.withUnsafeMutableBufferPointer { out in
                    EVP_Digest(input.baseAddress, input.count, out.baseAddress, nil, EVP_sha256(), nil)
                }
            }
            precondition(ok == 1, "EVP_Digest failed")
            return digest
        }

        static func hmacSHA256(_ message: [UInt8], key: [UInt8]) -> [UInt8] {
            var code = [UInt8](repeating: 0, count: 32)
            var length: UInt32 = 0
            let result = key.withUnsafeBufferPointer { k in
                message.withUnsafeBufferPointer { m in
                    code.withUnsafeMutableBufferPointer { out in
                        HMAC(
                            EVP_sha256(), k.baseAddress, Int32(k.count), m.baseAddress, m.count, out.baseAddress,
                            &length)
                    }
                }
            }
            precondition(result != nil && length == 32, "HMAC failed")
            return code
        }

        static func hkdfSHA256(key: [UInt8], salt: [UInt8], info: [UInt8], length: Int) throws -> [UInt8] {
            guard let context = EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, nil) else {
                throw CryptoError.library("HKDF context")
            }
            defer { EVP_PKEY_CTX_free(context) }
            var output = [UInt8](repeating: 0, count: length)
            var outputLength = length
            guard EVP_PKEY_derive_init(context) == 1, EVP_PKEY_CTX_set_hkdf_md(context, EVP_sha256()) == 1,
                EVP_PKEY_CTX_set1_hkdf_salt(context, salt, Int32(salt.count)) == 1,
                EVP_PKEY_CTX_set1_hkdf_key(context, key, Int32(key.count)) == 1,
                EVP_PKEY_CTX_add1_hkdf_info(context, info, Int32(info.count)) == 1,
                EVP_PKEY_derive(context, &output, &outputLength) == 1, outputLength == length
            else { throw CryptoError.library("HKDF") }
            return output
        }

        static func pbkdf2SHA256(password: [UInt8], salt: [UInt8], iterations: Int, length: Int) -> [UInt8] {
            var output = [UInt8](repeating: 0, count: length)
            let ok = password.withUnsafeBufferPointer { pw in
                salt.withUnsafeBufferPointer { s in
                    output.withUnsafeMutableBufferPointer { out in
                        pw.withMemoryRebound(to: CChar.self) { chars in
                            PKCS5_PBKDF2_HMAC(
                                chars.baseAddress, Int32(pw.count), s.baseAddress, Int32(s.count), Int32(iterations),
                                EVP_sha256(), Int32(length), out.baseAddress)
                        }
                    }
                }
            }
            precondition(ok == 1, "PKCS5_PBKDF2_HMAC failed")
            return output
        }

        /// The ciphers, fetched once: OpenSSL 3 looks an algorithm up by name, under a lock, at every
        /// use of the `EVP_aes_256_gcm()` form (a large part of the cost of opening a short value).
        final class Ciphers: @unchecked Sendable {
            let aes128GCM: OpaquePointer
            let aes256GCM: OpaquePointer

            static let shared = Ciphers()

            private init() {
                guard let aes128 = EVP_CIPHER_fetch(nil, "AES-128-GCM", nil),
                    let aes256 = EVP_CIPHER_fetch(nil, "AES-256-GCM", nil)
                else { preconditionFailure("libcrypto has no AES-GCM") }
                aes128GCM = aes128
                aes256GCM = aes256
            }
        }

        /// One key's cipher contexts (`AESGCMKey`), made with the key once; a message sets its nonce.
        /// Opening has ``openers`` contexts, each under its own lock, so a page's values open on
        /// every core at once (a pull opens thousands; sealing is one write at a time).
        final class GCMContexts: @unchecked Sendable {
            // `@unchecked Sendable`: each context is used only under its lock.
            private let encrypt: OpaquePointer
            private let lock = NSLock()
            private let key: [UInt8]
            private let openers = (0..<4).map { _ in Opener() }

            /// An opening context, made when two threads first open at once, used under `lock`.
            private final class Opener {
                let lock = NSLock()
                var context: OpaquePointer?
            }

            init?(key: [UInt8]) {
                guard let encrypt = EVP_CIPHER_CTX_new() else { return nil }
                self.encrypt = encrypt
                self.key = key
                guard EVP_EncryptInit_ex(encrypt, gcm(key), nil, key, nil) == 1 else { return nil }
            }

            deinit {
                EVP_CIPHER_CTX_free(encrypt)
                for opener in openers { EVP_CIPHER_CTX_free(opener.context) }
            }

            /// Runs `body` with an opening context no other thread holds: the first free one (made
            /// with the key on first use), or the first one once it is free.
            private func withDecrypt<T>(_ body: (OpaquePointer) throws -> T) throws -> T {
                let opener =
                    openers.first { $0.lock.try() }
                    ?? {
                        openers[0].lock.lock(); return openers[0]
                    }()
                defer { opener.lock.unlock() }
                if opener.context == nil {
                    guard let context = EVP_CIPHER_CTX_new() else { throw CryptoError.library("cipher context") }
                    guard EVP_DecryptInit_ex(context, gcm(key), nil, key, nil) == 1 else {
                        EVP_CIPHER_CTX_free(context)
                        throw CryptoError.library("cipher context")
                    }
                    opener.context = context
                }
                return try body(opener.context!)
            }

            func seal(_ plaintext: [UInt8], nonce: [UInt8], associatedData: [UInt8]) throws -> [UInt8] {
                lock.lock()
                defer { lock.unlock() }
                var output = [UInt8](repeating: 0, count: plaintext.count + 16)
                var written: Int32 = 0
                var finished: Int32 = 0
                var ignored: Int32 = 0
                let context = encrypt
                let ok = output.withUnsafeMutableBufferPointer { out in
                    EVP_EncryptInit_ex(context, nil, nil, nil, nonce) == 1
                        && (associatedData.isEmpty
                            || EVP_EncryptUpdate(context, nil, &ignored, associatedData, Int32(associatedData.count))
                                == 1)
                        && EVP_EncryptUpdate(context, out.baseAddress, &written, plaintext, Int32(plaintext.count)) == 1
                        && EVP_EncryptFinal_ex(context, out.baseAddress! + Int(written), &finished) == 1
                        && EVP_CIPHER_CTX_ctrl(
                            context, EVP_CTRL_GCM_GET_TAG, 16, out.baseAddress! + Int(written + finished)) == 1
                }
                guard ok, Int(written + finished) == plaintext.count else {
                    throw CryptoError.library("AES-GCM sealing")
                }
                return output
            }

            func open(_ sealed: ArraySlice<UInt8>, nonce: ArraySlice<UInt8>, associatedData: [UInt8]) throws -> [UInt8]
            {
                try withDecrypt { try open(sealed, nonce: nonce, associatedData: associatedData, with: $0) }
            }

            private func open(
                _ sealed: ArraySlice<UInt8>, nonce: ArraySlice<UInt8>, associatedData: [UInt8],
                with context: OpaquePointer
            ) throws -> [UInt8] {
                let length = sealed.count - 16
                var written: Int32 = 0
                var finished: Int32 = 0
                var ignored: Int32 = 0
                // The plaintext is as long as the ciphertext: written in place, no copy after. The
                // tag is read where it lies (OpenSSL copies it).
                var ok = false
                let output = [UInt8](unsafeUninitializedCapacity: max(length, 1)) { out, count in
                    ok = sealed.withUnsafeBufferPointer { input in
                        nonce.withUnsafeBufferPointer { iv in
                            EVP_DecryptInit_ex(context, nil, nil, nil, iv.baseAddress) == 1
                                && (associatedData.isEmpty
                                    || EVP_DecryptUpdate(
                                        context, nil, &ignored, associatedData, Int32(associatedData.count)) == 1)
                                && EVP_DecryptUpdate(
                                    context, out.baseAddress, &written, input.baseAddress, Int32(length))
                                    == 1
                                && EVP_CIPHER_CTX_ctrl(
                                    context, EVP_CTRL_GCM_SET_TAG, 16,
                                    UnsafeMutableRawPointer(mutating: input.baseAddress! + length)) == 1
                                && EVP_DecryptFinal_ex(context, out.baseAddress! + Int(written), &finished) == 1
                        }
                    }
                    count = ok ? Int(written + finished) : 0
                }
                guard ok else {
                    ERR_clear_error()
                    throw CryptoError.badMessage("its tag does not verify")
                }
                return output
            }
        }

        private static func gcm(_ key: [UInt8]) -> OpaquePointer? {
            key.count == 32 ? Ciphers.shared.aes256GCM : Ciphers.shared.aes128GCM
        }

        // The one-shot calls (Web Push, envelopes, wrapped keys): a key's contexts for one message.
        static func aesGCMSeal(
            _ plaintext: [UInt8], key: [UInt8], nonce: [UInt8], associatedData: [UInt8]
        ) throws -> [UInt8] {
            guard let contexts = GCMContexts(key: key) else { throw CryptoError.library("cipher context") }
            return try contexts.seal(plaintext, nonce: nonce, associatedData: associatedData)
        }

        static func aesGCMOpen(
            _ sealed: [UInt8], key: [UInt8], nonce: [UInt8], associatedData: [UInt8]
        ) throws -> [UInt8] {
            guard let contexts = GCMContexts(key: key) else { throw CryptoError.library("cipher context") }
            return try contexts.open(sealed[...], nonce: nonce[...], associatedData: associatedData)
        }

        private static func x25519Key(privateKey: [UInt8]) throws -> OpaquePointer {
            guard let key = EVP_PKEY_new_raw_private_key(EVP_PKEY_X25519, nil, privateKey, privateKey.count) else {
                throw CryptoError.badKey
            }
            return key
        }

        static func x25519PublicKey(_ privateKey: [UInt8]) throws -> [UInt8] {
            let key = try x25519Key(privateKey: privateKey)
            defer { EVP_PKEY_free(key) }
            var publicKey = [UInt8](repeating: 0, count: 32)
            var length = 32
            guard EVP_PKEY_get_raw_public_key(key, &publicKey, &length) == 1, length == 32 else {
                throw CryptoError.library("X25519 public key")
            }
            return publicKey
        }

        static func x25519SharedSecret(_ privateKey: [UInt8], _ peerPublicKey: [UInt8]) throws -> [UInt8] {
            let key = try x25519Key(privateKey: privateKey)
            defer { EVP_PKEY_free(key) }
            guard let peer = EVP_PKEY_new_raw_public_key(EVP_PKEY_X25519, nil, peerPublicKey, peerPublicKey.count)
            else {
                throw CryptoError.badKey
            }
            defer { EVP_PKEY_free(peer) }
            guard let context = EVP_PKEY_CTX_new(key, nil) else { throw CryptoError.library("X25519 context") }
            defer { EVP_PKEY_CTX_free(context) }
            var secret = [UInt8](repeating: 0, count: 32)
            var length = 32
            guard EVP_PKEY_derive_init(context) == 1, EVP_PKEY_derive_set_peer(context, peer) == 1 else {
                throw CryptoError.library("X25519")
            }
            // libcrypto refuses a low-order peer point (an all-zero secret).
            guard EVP_PKEY_derive(context, &secret, &length) == 1, length == 32 else {
                ERR_clear_error()
                throw CryptoError.badKey
            }
            return secret
        }
    }
#endif
