/// Owns the saved servers, which one is in use, and their tokens: saving a
/// paired server, choosing and forgetting servers, and the secure store
/// where tokens live between launches (one key per server). The list
/// itself is persisted with the app's snapshot (`Persistence/`).
///
///     paired              → secure_store_write(token), serverSelected
///     select_server       → serverChanged (another server), serverSelected
///     forget_server       → secure_store_delete, serverChanged(nil) if it was in use
///     credentialsRejected → secure_store_delete (the server will never take it again)
public struct ServersInteractor: Interactor {
    public init() {}

    /// What the servers feature acts on.
    public enum Input: Equatable, Sendable {
        // Actions
        case selectServer(id: String)
        case forgetServer(id: String)
        case setWorkingDir(String, serverID: String)
        // Platform events
        case secureStore(SecureStoreResult)
        // Pairing's outputs
        case paired(PairedServer)
        case serverVersionSeen(serverID: String, version: String?)
        // The connection's outputs
        case credentialsNeeded
        case credentialsRejected(serverID: String)
    }

    public func interact(_ state: inout ServersState, _ input: Input, _ facts: Facts) -> Emission {
        switch input {
        case .paired(let paired):
            return save(&state, paired, facts)
        case .selectServer(let id):
            return select(&state, serverID: id, facts)
        case .forgetServer(let id):
            return forget(&state, serverID: id)
        case .setWorkingDir(let value, let id):
            return setWorkingDir(&state, value, serverID: id)
        case .serverVersionSeen(let serverID, let version):
            if let i = state.list.firstIndex(where: { $0.id == serverID }) {
                state.list[i].serverVersion = version ?? state.list[i].serverVersion
            }
            return .none
        case .credentialsNeeded:
            guard let server = state.selected else { return .none }
            return .effect(.secureStore(.read(key: server.tokenKey)))
        case .credentialsRejected(let serverID):
            state.credentials[serverID] = nil
            guard let server = state.list.first(where: { $0.id == serverID }) else { return .none }
            return .effect(.secureStore(.delete(key: server.tokenKey)))
        case .secureStore(let result):
            return stored(&state, result, facts)
        }
    }

    private func save(_ state: inout ServersState, _ paired: PairedServer, _ facts: Facts) -> Emission {
        var server = SavedServer(
            address: paired.address, name: paired.name, serverVersion: paired.serverVersion, workingDir: paired.workingDir)
        var emission = Emission.none
        if let i = state.list.firstIndex(where: { $0.id == server.id }) {
            // Paired again: the same server, so the same last session.
            server.lastSessionID = state.list[i].id == state.selectedID ? facts.session.id : state.list[i].lastSessionID
            state.list[i] = server
        } else {
            if state.list.count >= ServersState.limit { emission = forgetOldest(&state) }
            state.list.append(server)
        }
        state.credentials[server.id] = paired.token
        emission.append(.effect(.secureStore(.write(key: server.tokenKey, value: paired.token))))
        emission.append(choose(&state, server, facts))
        emission.append(.tell(.serverSelected(ServerSelection(server: server, reason: .paired(serverVersion: paired.serverVersion)))))
        return emission
    }

    /// Makes room for one more server: the oldest saved one not in use
    /// goes, with its token (as `forget_server` would), and the person is told.
    private func forgetOldest(_ state: inout ServersState) -> Emission {
        guard let i = state.list.firstIndex(where: { $0.id != state.selectedID }) else { return .none }
        let oldest = state.list.remove(at: i)
        state.credentials[oldest.id] = nil
        return .effect(.secureStore(.delete(key: oldest.tokenKey)))
            + .note("more than \(ServersState.limit) saved servers: forgot the oldest, \(oldest.id)", .dropped)
            + .internal(
                .notice(
                    .info,
                    "This device keeps at most \(ServersState.limit) servers: it forgot the oldest, \(oldest.name) (\(oldest.address.display)). Pair with it again to use it."))
    }

    private func select(_ state: inout ServersState, serverID: String, _ facts: Facts) -> Emission {
        guard let server = state.list.first(where: { $0.id == serverID }) else {
            return .note("select_server: no saved server \(serverID)")
        }
        if serverID == state.selectedID && facts.connection.phase == .connected { return .internal(.openChat) }
        let emission = choose(&state, server, facts) + .tell(.serverSelected(ServerSelection(server: server, reason: .chosen)))
        guard state.credentials[server.id] == nil else { return emission }
        return emission + .effect(.secureStore(.read(key: server.tokenKey)))
    }

    /// Makes `server` the one in use; when it is another one, everything
    /// that belonged to the old one is forgotten.
    private func choose(_ state: inout ServersState, _ server: SavedServer, _ facts: Facts) -> Emission {
        guard state.selectedID != server.id else { return .none }
        // The server left keeps its session for when it is chosen again.
        if let old = state.selectedID, let i = state.list.firstIndex(where: { $0.id == old }), let session = facts.session.id {
            state.list[i].lastSessionID = session
        }
        state.selectedID = server.id
        return .tell(.serverChanged(to: server))
    }

    private func forget(_ state: inout ServersState, serverID: String) -> Emission {
        guard let server = state.list.first(where: { $0.id == serverID }) else {
            return .note("forget_server: no saved server \(serverID)")
        }
        state.list.removeAll { $0.id == serverID }
        state.credentials[serverID] = nil
        var emission = Emission.none
        if state.selectedID == serverID {
            state.selectedID = nil
            emission = .tell(.serverChanged(to: nil))
        }
        return emission + .effect(.secureStore(.delete(key: server.tokenKey)))
    }

    /// A saved server's working directory, from settings: kept when it is
    /// an absolute path (the connection to that server starts over), refused
    /// with a field error otherwise.
    private func setWorkingDir(_ state: inout ServersState, _ value: String, serverID: String) -> Emission {
        guard let i = state.list.firstIndex(where: { $0.id == serverID }) else {
            return .note("set_working_dir: no saved server \(serverID)")
        }
        switch WorkingDirectory.validate(value) {
        case .failure(let message):
            state.list[i].workingDirError = message
            return .note("set_working_dir: \(message.text)")
        case .success(let path):
            state.list[i].workingDirError = nil
            guard path != state.list[i].workingDir else { return .none }
            state.list[i].workingDir = path
            return .tell(.workingDirChanged(serverID: serverID))
        }
    }

    // MARK: - Secure store

    private func stored(_ state: inout ServersState, _ result: SecureStoreResult, _ facts: Facts) -> Emission {
        switch result {
        case .writeFinished(let id, let key, let ok):
            guard facts.pending(id) != nil else { return .note("stale secure_store_write_finished ignored", .ignored) }
            guard ok else {
                return .settle(id)
                    + .internal(
                        .notice(
                            .warning,
                            "This device could not save the server's credentials; you may need to pair again after restarting the app."))
                    + .note("secure_store_write failed for \(key)")
            }
            return .settle(id)

        case .readFinished(let id, let key, let ok, let value):
            guard facts.pending(id)?.kind == .secureStoreRead else { return .note("stale secure_store_read_finished ignored", .ignored) }
            guard let server = state.list.first(where: { $0.tokenKey == key }) else {
                return .settle(id) + .note("secure_store_read_finished for an unknown key ignored", .ignored)
            }
            guard ok, let token = value, !token.isEmpty else {
                guard server.id == state.selectedID else { return .settle(id) }
                return .settle(id) + .tell(.credentialsMissing(serverName: server.name))
            }
            state.credentials[server.id] = token
            guard server.id == state.selectedID else { return .settle(id) }
            return .settle(id) + .tell(.credentialsLoaded(serverID: server.id))
        }
    }
}
