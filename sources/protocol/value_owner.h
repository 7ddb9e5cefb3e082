#pragma once
// What keeps a referenced piece of an out_buffer alive until it is written:
// either a shared_ptr (a temp-file value read into a string) or an intrusive
// reference some other layer holds, dropped by calling release(object,
// context) once (the store's item pin: no allocation per hit, where a
// shared_ptr would allocate its control block).
//
// Move-only; single-threaded like the out_buffer that holds it, though the
// release function itself may be called on any thread (the store's is).

#include <cstddef>
#include <memory>
#include <utility>

namespace ithaca::protocol {

class value_owner {
 public:
  using release_fn = void (*)(void* object, void* context) noexcept;

  value_owner() noexcept = default;
  value_owner(std::nullptr_t) noexcept {}
  // Implicit: every caller that kept its bytes with a shared_ptr still does.
  template <class T>
  value_owner(std::shared_ptr<T> shared) noexcept : shared_(std::move(shared)) {}
  // Adopts one reference that release(object, context) drops.
  value_owner(release_fn release, void* object, void* context) noexcept
      : release_(release), object_(object), context_(context) {}
  value_owner(value_owner&& o) noexcept
      : shared_(std::move(o.shared_)),
        release_(std::exchange(o.release_, nullptr)),
        object_(o.object_),
        context_(o.context_) {}
  value_owner& operator=(value_owner&& o) noexcept {
    if (this != &o) {
      reset();
      shared_ = std::move(o.shared_);
      release_ = std::exchange(o.release_, nullptr);
      object_ = o.object_;
      context_ = o.context_;
    }
    return *this;
  }
  value_owner(const value_owner&) = delete;
  value_owner& operator=(const value_owner&) = delete;
  ~value_owner() { reset(); }

  explicit operator bool() const noexcept { return release_ != nullptr || shared_ != nullptr; }

  void reset() noexcept {
    shared_.reset();
    if (release_) std::exchange(release_, nullptr)(object_, context_);
  }

 private:
  std::shared_ptr<const void> shared_;
  release_fn release_ = nullptr;
  void* object_ = nullptr;
  void* context_ = nullptr;
};

}  // namespace ithaca::protocol
