//! Cloud providers: everything that differs between AKS, EKS and ACK sits behind this module.
//!
//! For now this holds the EKS (`aws`) and ACK (`alibaba`) leaves — profile sections, instance
//! catalogues, GPU node labels and taints, and the provisioning files built as data — each
//! with its own tests, ready to be plugged into the provider seam.

pub mod alibaba;
pub mod aws;
