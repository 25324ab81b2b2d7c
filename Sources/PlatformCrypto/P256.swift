#if canImport(CCrypto)
    internal import CCrypto

    /// A P-256 key of libcrypto's (an `EVP_PKEY`): a key pair, or a peer's public key alone. Made
    /// once and never changed, so one key may be used from several threads at once.
    ///
    /// Everything here is OpenSSL's: key generation, the point checks of an import, ECDH and ECDSA
    /// (for VAPID's ES256). Nothing is computed in Swift but the byte layouts the standards fix.
    public final class P256Key: @unchecked Sendable {
        let pointer: OpaquePointer

        private init(_ pointer: OpaquePointer) { self.pointer = pointer }

        deinit { EVP_PKEY_free(pointer) }

        /// A fresh key pair from libcrypto's random generator.
        public static func generate() throws -> P256Key {
            guard let context = EVP_PKEY_CTX_new_from_name(nil, basket_key_type_ec, nil) else {
                throw CryptoError.library("EC context")
            }
            defer { EVP_PKEY_CTX_free(context) }
            var key: OpaquePointer?
            guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_CTX_set_group_name(context, basket_group_p256) == 1,
                EVP_PKEY_generate(context, &key) == 1, let key
            else { throw CryptoError.library("P-256 key generation") }
            return P256Key(key)
        }

        /// The key pair whose private scalar is `privateKey` (32 bytes, big-endian) and whose public
        /// point is `publicKey` (65 bytes, uncompressed), as a stored key or a test vector gives them.
        /// - Throws: ``CryptoError/badKey`` when they are not a P-256 key pair.
        public convenience init(privateKey: [UInt8], publicKey: [UInt8]) throws {
            guard privateKey.count == 32 else { throw CryptoError.badKey }
            try self.init(Self.imported(privateKey: privateKey, publicKey: publicKey))
            guard try Self.check(self, EVP_PKEY_pairwise_check) else { throw CryptoError.badKey }
        }

        /// A peer's public key from its 65-byte uncompressed point (a browser's `p256dh`).
        /// - Throws: ``CryptoError/badKey`` when it is not a point on P-256.
        public convenience init(publicKey: [UInt8]) throws {
            try self.init(Self.imported(privateKey: nil, publicKey: publicKey))
            guard try Self.check(self, EVP_PKEY_public_check) else { throw CryptoError.badKey }
        }

        /// The public point, 65 bytes uncompressed (`04 || x || y`).
        public var publicKeyBytes: [UInt8] {
            var bytes: UnsafeMutablePointer<UInt8>?
            let count = EVP_PKEY_get1_encoded_public_key(pointer, &bytes)
            guard let bytes, count == 65 else { preconditionFailure("a P-256 key without its point") }
            defer { CRYPTO_free(bytes, #fileID, #line) }
            return Array(UnsafeBufferPointer(start: bytes, count: count))
        }

        /// The private scalar, 32 bytes big-endian (nil for a public key alone): what is stored.
        public var privateKeyBytes: [UInt8]? {
            var number: OpaquePointer?
            guard EVP_PKEY_get_bn_param(pointer, basket_param_private_key, &number) == 1, let number else { return nil }
            defer { BN_clear_free(number) }
            var bytes = [UInt8](repeating: 0, count: 32)
            guard BN_bn2binpad(number, &bytes, 32) == 32 else { return nil }
            return bytes
        }

        /// The ECDH shared secret of this key pair and `peer`'s public key (32 bytes: the x of the point).
        public func sharedSecret(with peer: P256Key) throws -> [UInt8] {
            guard let context = EVP_PKEY_CTX_new_from_pkey(nil, pointer, nil) else {
                throw CryptoError.library("ECDH context")
            }
            defer { EVP_PKEY_CTX_free(context) }
            var length = 32
            var secret = [UInt8](repeating: 0, count: 32)
            guard EVP_PKEY_derive_init(context) == 1, EVP_PKEY_derive_set_peer(context, peer.pointer) == 1,
                EVP_PKEY_derive(context, &secret, &length) == 1, length == 32
            else { throw CryptoError.library("ECDH") }
            return secret
        }

        /// The ES256 signature of `message` (ECDSA over SHA-256), as JWS writes it: `r || s`, 64 bytes.
        public func signES256(_ message: [UInt8]) throws -> [UInt8] {
            guard let context = EVP_MD_CTX_new() else { throw CryptoError.library("digest context") }
            defer { EVP_MD_CTX_free(context) }
            var length = 0
            guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, pointer) == 1,
                EVP_DigestSign(context, nil, &length, message, message.count) == 1
            else { throw CryptoError.library("ECDSA signing") }
            var der = [UInt8](repeating: 0, count: length)
            guard EVP_DigestSign(context, &der, &length, message, message.count) == 1 else {
                throw CryptoError.library("ECDSA signing")
            }
            return try Self.rawSignature(der: Array(der.prefix(length)))
        }

        /// Whether `signature` (`r || s`, 64 bytes) is this public key's ES256 signature of `message`.
        public func verifyES256(_ signature: [UInt8], of message: [UInt8]) -> Bool {
            guard signature.count == 64, let der = Self.derSignature(raw: signature),
                let context = EVP_MD_CTX_new()
            else { return false }
            defer { EVP_MD_CTX_free(context) }
            guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, pointer) == 1 else { return false }
            return EVP_DigestVerify(context, der, der.count, message, message.count) == 1
        }

        // MARK: - Byte layouts

        /// An `EVP_PKEY` from the parameters OpenSSL 3 takes: the group, the point, the scalar.
        private static func imported(privateKey: [UInt8]?, publicKey: [UInt8]) throws -> OpaquePointer {
            guard publicKey.count == 65, publicKey[0] == 4 else { throw CryptoError.badKey }
            var scalar: OpaquePointer?
            defer { BN_clear_free(scalar) }
            if let privateKey {
                scalar = BN_bin2bn(privateKey, Int32(privateKey.count), nil)
                guard scalar != nil else { throw CryptoError.library("parameters") }
            }
            // The builder keeps pointers to the names and bytes until it makes the parameters: the
            // names are C constants, the point stays pinned until then.
            let parameters: OpaquePointer? = publicKey.withUnsafeBufferPointer { point in
                guard let builder = OSSL_PARAM_BLD_new() else { return nil }
                defer { OSSL_PARAM_BLD_free(builder) }
                guard OSSL_PARAM_BLD_push_utf8_string(builder, basket_param_group, basket_group_p256, 0) == 1,
                    OSSL_PARAM_BLD_push_octet_string(builder, basket_param_public_key, point.baseAddress, point.count)
                        == 1,
                    scalar.map({ OSSL_PARAM_BLD_push_BN(builder, basket_param_private_key, $0) == 1 }) ?? true
                else { return nil }
                return OpaquePointer(OSSL_PARAM_BLD_to_param(builder))
            }
            guard let parameters else { throw CryptoError.library("parameters") }
            defer { OSSL_PARAM_free(UnsafeMutablePointer(parameters)) }
            guard let context = EVP_PKEY_CTX_new_from_name(nil, basket_key_type_ec, nil) else {
                throw CryptoError.library("EC context")
            }
            defer { EVP_PKEY_CTX_free(context) }
            var key: OpaquePointer?
            let selection = privateKey == nil ? basket_pkey_public_key : basket_pkey_keypair
            guard EVP_PKEY_fromdata_init(context) == 1,
                EVP_PKEY_fromdata(context, &key, selection, UnsafeMutablePointer(parameters)) == 1, let key
            else {
                ERR_clear_error()
                throw CryptoError.badKey
            }
            return key
        }

        /// Runs one of libcrypto's key checks (the point is on the curve; the pair belongs together).
        private static func check(_ key: P256Key, _ test: (OpaquePointer?) -> Int32) throws -> Bool {
            guard let context = EVP_PKEY_CTX_new_from_pkey(nil, key.pointer, nil) else {
                throw CryptoError.library("key check context")
            }
            defer { EVP_PKEY_CTX_free(context) }
            let passed = test(context) == 1
            if !passed { ERR_clear_error() }
            return passed
        }

        /// `r || s` from the DER `ECDSA-Sig-Value` libcrypto signs in.
        private static func rawSignature(der: [UInt8]) throws -> [UInt8] {
            var cursor: UnsafePointer<UInt8>? = nil
            let signature: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
                cursor = buffer.baseAddress
                return d2i_ECDSA_SIG(nil, &cursor, buffer.count)
            }
            guard let signature else { throw CryptoError.library("ECDSA signature") }
            defer { ECDSA_SIG_free(signature) }
            var r: OpaquePointer?
            var s: OpaquePointer?
            ECDSA_SIG_get0(signature, &r, &s)
            var raw = [UInt8](repeating: 0, count: 64)
            let written = raw.withUnsafeMutableBufferPointer { out in
                BN_bn2binpad(r, out.baseAddress, 32) + BN_bn2binpad(s, out.baseAddress! + 32, 32)
            }
            guard written == 64 else { throw CryptoError.library("ECDSA signature") }
            return raw
        }

        /// The DER `ECDSA-Sig-Value` of `r || s`, for libcrypto's verification.
        private static func derSignature(raw: [UInt8]) -> [UInt8]? {
            guard let signature = ECDSA_SIG_new() else { return nil }
            defer { ECDSA_SIG_free(signature) }
            let r = BN_bin2bn(raw, 32, nil)
            let s = raw.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress! + 32, 32, nil) }
            guard let r, let s, ECDSA_SIG_set0(signature, r, s) == 1 else {
                BN_free(r)
                BN_free(s)
                return nil
            }
            var out: UnsafeMutablePointer<UInt8>?
            let length = i2d_ECDSA_SIG(signature, &out)
            guard length > 0, let out else { return nil }
            defer { CRYPTO_free(out, #fileID, #line) }
            return Array(UnsafeBufferPointer(start: out, count: Int(length)))
        }
    }
#endif
